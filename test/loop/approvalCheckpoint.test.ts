import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber, Option, Queue, Ref } from "effect"
import { TestClock } from "effect/testing"
import { toolSuccess } from "../../src/domain/ToolResult"
import { type ApprovalDesk, makeApprovalDesk } from "../../src/discord/ApprovalDesk"
import { executeToolCall } from "../../src/loop/executeToolCall"
import {
  type ApprovalOutcome,
  type ApprovalRequest,
  matchesApprovalRules,
  ToolApprovals,
  type ToolApprovalsShape
} from "../../src/tools/ToolApprovals"
import { makeHangingTool, rawTool } from "../support/tools/testTools"
import { callInput, makeToolCallHarness, testAttempt, type ToolCallHarness } from "../support/tools/toolCallHarness"

/**
 * Tool approvals before dispatch, on TestClock: the loop's checkpoint over a port whose questions
 * are answered through the same desk the Discord front uses (who may press is the desk's rule).
 */

interface Asked {
  readonly id: string
  readonly request: ApprovalRequest
}

/** A front for tests: `rules` say which calls wait; each question is put on `asked`; closings are recorded. */
const deskFront = (desk: ApprovalDesk, rules: ReadonlyArray<{ readonly kind: "tool" | "mcp_server"; readonly name: string }>, timeout: Duration.Input) =>
  Effect.gen(function*() {
    const asked = yield* Queue.unbounded<Asked>()
    const closed = yield* Ref.make<ReadonlyArray<readonly [ApprovalOutcome, string | undefined]>>([])
    const approvals: ToolApprovalsShape = {
      timeout: Duration.fromInputUnsafe(timeout),
      required: (request) => Effect.succeed(matchesApprovalRules(rules, request)),
      ask: (request) =>
        Effect.gen(function*() {
          const opened = yield* desk.open(request.userId)
          if (Option.isNone(opened)) return Option.none()
          yield* Queue.offer(asked, { id: opened.value.id, request })
          return Option.some({
            answer: opened.value.answer,
            close: (outcome: ApprovalOutcome, by: string | undefined) =>
              Effect.andThen(desk.close(opened.value.id), Ref.update(closed, (all) => [...all, [outcome, by] as const]))
          })
        })
    }
    return { approvals, asked, closed }
  })

/** A tool that counts its runs. */
const countingTool = (name: string) =>
  Effect.map(Ref.make(0), (runs) => ({
    runs,
    tool: rawTool({ name, execute: () => Effect.as(Ref.update(runs, (n) => n + 1), toolSuccess({ sent: true })) })
  }))

const call = (h: ToolCallHarness, approvals: ToolApprovalsShape, name: string) =>
  h.run(executeToolCall({ ...callInput({ name, args: { to: "bob@example.com" } }), iteration: 0, attempt: testAttempt })).pipe(
    Effect.provideService(ToolApprovals, approvals)
  )

const payloadOf = (outcome: Effect.Success<ReturnType<typeof call>>) =>
  outcome._tag === "History" ? outcome.historyEntry.functionResponse.response.result : undefined

const setUp = (rules: ReadonlyArray<{ readonly kind: "tool" | "mcp_server"; readonly name: string }> = [{ kind: "tool", name: "send_mail" }]) =>
  Effect.gen(function*() {
    const mail = yield* countingTool("send_mail")
    const h = yield* makeToolCallHarness({ tools: [mail.tool] })
    const desk = yield* makeApprovalDesk()
    const front = yield* deskFront(desk, rules, Duration.seconds(120))
    return { h, desk, mail, ...front }
  })

describe("tool approvals before dispatch (TestClock)", () => {
  it.effect("approve: the invoking user's answer runs the tool; the question is closed as approved", () =>
    Effect.gen(function*() {
      const { approvals, asked, closed, desk, h, mail } = yield* setUp()
      const fiber = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      const question = yield* Queue.take(asked)
      assert.strictEqual(question.request.userId, "user-1")
      assert.deepStrictEqual(question.request.args, { to: "bob@example.com" })
      assert.strictEqual(yield* Ref.get(mail.runs), 0, "nothing runs before the answer")
      assert.strictEqual(yield* desk.press(question.id, { userId: "user-1", canManageServer: false }, "approved"), "taken")
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(payloadOf(outcome), { sent: true })
      assert.strictEqual(yield* Ref.get(mail.runs), 1)
      assert.deepStrictEqual(yield* Ref.get(closed), [["approved", "user-1"]])
      // Answered: a late press finds nothing.
      assert.strictEqual(yield* desk.press(question.id, { userId: "user-1", canManageServer: false }, "denied"), "unknown")
    }))

  it.effect("deny: the model gets denied_by_user, the tool never runs", () =>
    Effect.gen(function*() {
      const { approvals, asked, closed, desk, h, mail } = yield* setUp()
      const fiber = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      const question = yield* Queue.take(asked)
      yield* desk.press(question.id, { userId: "user-1", canManageServer: false }, "denied")
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome._tag === "History" && outcome.success, false)
      assert.deepInclude(payloadOf(outcome) as object, { status: "denied_by_user", functionName: "send_mail" })
      assert.strictEqual(yield* Ref.get(mail.runs), 0)
      assert.deepStrictEqual(yield* Ref.get(closed), [["denied", "user-1"]])
    }))

  it.effect("a button pressed by someone else counts for nothing; a Manage Server member's answer counts", () =>
    Effect.gen(function*() {
      const { approvals, asked, closed, desk, h, mail } = yield* setUp()
      const fiber = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      const question = yield* Queue.take(asked)
      assert.strictEqual(yield* desk.press(question.id, { userId: "user-2", canManageServer: false }, "approved"), "not_allowed")
      yield* TestClock.adjust(Duration.seconds(10))
      assert.isTrue(fiber.pollUnsafe() === undefined, "still waiting after the wrong user's press")
      assert.strictEqual(yield* Ref.get(mail.runs), 0)
      assert.strictEqual(yield* desk.press(question.id, { userId: "admin", canManageServer: true }, "approved"), "taken")
      yield* Fiber.join(fiber)
      assert.strictEqual(yield* Ref.get(mail.runs), 1)
      assert.deepStrictEqual(yield* Ref.get(closed), [["approved", "admin"]])
    }))

  it.effect("no answer: denied at exactly TOOL_APPROVAL_TIMEOUT_MS (120 s), not before", () =>
    Effect.gen(function*() {
      const { approvals, asked, closed, h, mail } = yield* setUp()
      const fiber = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      yield* Queue.take(asked)
      yield* TestClock.adjust(Duration.millis(119_999))
      assert.isTrue(fiber.pollUnsafe() === undefined, "still waiting 1 ms before the deadline")
      yield* TestClock.adjust(Duration.millis(1))
      const outcome = yield* Fiber.join(fiber)
      const payload = payloadOf(outcome) as { status: string; reason: string }
      assert.strictEqual(payload.status, "denied_by_user")
      assert.include(payload.reason, "within 120 s")
      assert.strictEqual(yield* Ref.get(mail.runs), 0)
      assert.deepStrictEqual(yield* Ref.get(closed), [["timed_out", undefined]])
    }))

  it.effect("/kill during the wait stops the turn at once; the question is closed as stopped", () =>
    Effect.gen(function*() {
      const { approvals, asked, closed, desk, h, mail } = yield* setUp()
      const fiber = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      const question = yield* Queue.take(asked)
      yield* h.signals.kill({ requesterId: "user-1" })
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome, { _tag: "Abort", status: "stopped_by_user" })
      assert.strictEqual(yield* Ref.get(mail.runs), 0)
      assert.deepStrictEqual(yield* Ref.get(closed), [["stopped", undefined]])
      assert.strictEqual(yield* desk.size, 0)
      assert.strictEqual(yield* desk.press(question.id, { userId: "user-1", canManageServer: false }, "approved"), "unknown")
    }))

  it.effect("the wait does not count against the tool's own timeout: it starts once the call is approved", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("send_mail")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool], loop: { toolExecutionTimeout: Duration.seconds(10) } })
      const desk = yield* makeApprovalDesk()
      const { approvals, asked } = yield* deskFront(desk, [{ kind: "tool", name: "send_mail" }], Duration.seconds(120))
      const fiber = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      const question = yield* Queue.take(asked)
      yield* TestClock.adjust(Duration.seconds(100))
      yield* desk.press(question.id, { userId: "user-1", canManageServer: false }, "approved")
      yield* Deferred.await(hanging.started)
      yield* TestClock.adjust(Duration.millis(9_999))
      assert.isTrue(fiber.pollUnsafe() === undefined, "the tool still has its own 10 s after 100 s of waiting")
      yield* TestClock.adjust(Duration.millis(1))
      const outcome = yield* Fiber.join(fiber)
      assert.include((payloadOf(outcome) as { reason: string }).reason, "timed out after 10s")
      assert.strictEqual(outcome._tag === "History" ? outcome.durationMs : -1, 10_000)
    }))

  it.effect("which calls wait: a tool by name (any case, aliases resolved), every tool of one MCP server; others run at once", () =>
    Effect.gen(function*() {
      const mail = yield* countingTool("send_mail")
      const other = yield* countingTool("web_search")
      const issue = yield* countingTool("create_issue")
      const mcpTool = { ...issue.tool, category: "mcp" as const, source: { kind: "mcp" as const, scope: "guild" as const, server: "GitHub" } }
      const h = yield* makeToolCallHarness({ tools: [mail.tool, other.tool], aliases: [["mail", "send_mail"]], guildTools: () => ({ tools: [mcpTool], hiddenBuiltins: [] }) })
      const desk = yield* makeApprovalDesk()
      const { approvals, asked } = yield* deskFront(desk, [{ kind: "tool", name: "SEND_MAIL" }, { kind: "mcp_server", name: "github" }], Duration.seconds(120))
      yield* call(h, approvals, "web_search")
      assert.strictEqual(yield* Ref.get(other.runs), 1, "not marked: ran without a question")
      assert.isTrue(Option.isNone(yield* Queue.poll(asked)))
      // The turn declared its guild tools (the registry caches them in the turn state).
      yield* h.registry.toolsForTurn({ provider: "p", model: "m", guildId: "guild-1", channelId: "channel-1", flags: (yield* Ref.get(h.state.flags)), turnState: h.state })
      for (const name of ["mail", "create_issue"]) {
        const fiber = yield* Effect.forkChild(call(h, approvals, name))
        const question = yield* Queue.take(asked)
        assert.strictEqual(question.request.toolName, name)
        yield* desk.press(question.id, { userId: "user-1", canManageServer: false }, "approved")
        yield* Fiber.join(fiber)
      }
      assert.strictEqual(yield* Ref.get(mail.runs), 1)
      assert.strictEqual(yield* Ref.get(issue.runs), 1)
    }))

  it.effect("the desk is bounded: past its limit a call is denied unasked", () =>
    Effect.gen(function*() {
      const mail = yield* countingTool("send_mail")
      const h = yield* makeToolCallHarness({ tools: [mail.tool] })
      const desk = yield* makeApprovalDesk(1)
      const { approvals, asked } = yield* deskFront(desk, [{ kind: "tool", name: "send_mail" }], Duration.seconds(120))
      const first = yield* Effect.forkChild(call(h, approvals, "send_mail"))
      yield* Queue.take(asked)
      const second = yield* call(h, approvals, "send_mail")
      assert.include((payloadOf(second) as { reason: string }).reason, "nobody could be asked")
      yield* Fiber.interrupt(first)
      assert.strictEqual(yield* Ref.get(mail.runs), 0)
    }))
})
