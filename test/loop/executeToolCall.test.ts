import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { UserNotice } from "../../src/loop/UserNotice"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { TurnEffect } from "../../src/domain/TurnEffect"
import { turnOriginOf } from "../../src/domain/TurnOrigin"
import { deliberateModeOff } from "../../src/domain/DeliberateToolMode"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { ToolContext } from "../../src/tools/ToolContext"
import { constantTool, dyingTool, echoTool, failingTool, makeRecordingTool, rawTool } from "../support/tools/testTools"
import { call, callInput, makeToolCallHarness, testAttempt, type ToolCallHarness } from "../support/tools/toolCallHarness"

/** Runs one executeToolCall for `rawCall` through the harness. */
const run = (h: ToolCallHarness, rawCall: unknown, options: { readonly iteration?: number; readonly text?: string } = {}) =>
  h.run(executeToolCall({ ...callInput(rawCall, options.text ?? ""), iteration: options.iteration ?? 0, attempt: testAttempt }))

/** The History outcome, failing the test on any other outcome. */
const history = (outcome: Effect.Success<ReturnType<typeof run>>) => {
  if (outcome._tag !== "History") throw new Error(`expected a History outcome, got ${outcome._tag}`)
  return outcome
}

const resultOf = (outcome: Effect.Success<ReturnType<typeof run>>) => history(outcome).historyEntry.functionResponse.response.result

describe("executeToolCall: dispatch and payload (spec §3, §1.4)", () => {
  it.effect("[2] dispatches echo_tool once with the model's args and replays its data", () =>
    Effect.gen(function*() {
      const echo = yield* makeRecordingTool("echo_tool", (args) => Effect.succeed(toolSuccess({ echoed: args["text"] })))
      const h = yield* makeToolCallHarness({ tools: [echo.tool] })
      const outcome = history(yield* run(h, { name: "echo_tool", args: { text: "hello" } }))
      assert.strictEqual(outcome.success, true)
      assert.strictEqual(outcome.functionName, "echo_tool")
      assert.deepStrictEqual((yield* Ref.get(echo.calls)).map((c) => c.args), [{ text: "hello" }])
      assert.deepStrictEqual(outcome.historyEntry.functionCall, call("echo_tool", { text: "hello" }))
      assert.deepStrictEqual(outcome.historyEntry.functionResponse, { name: "echo_tool", response: { result: { echoed: "hello" } } })
      assert.strictEqual(outcome.stickerSelection, undefined)
      assert.strictEqual(outcome.endTurn, false)
      assert.strictEqual(outcome.responseDelivered, false)
      assert.strictEqual((yield* h.registry.executionHistory()).length, 1)
    }))

  it.effect("[2] the schema-validated echo_tool decodes its arguments", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [echoTool] })
      assert.deepStrictEqual(resultOf(yield* run(h, { name: "echo_tool", args: { text: "hello" } })), { echoed: "hello" })
    }))

  it.effect("[3] a successful tool without data replays {status: completed}", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("quiet", toolSuccess())] })
      assert.deepStrictEqual(resultOf(yield* run(h, { name: "quiet", args: {} })), { status: "completed" })
    }))

  it.effect("[4] a failure replays the standard failure object, never the raw result", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("boomer", toolFailure("boom"))] })
      const outcome = history(yield* run(h, { name: "boomer", args: {} }))
      assert.strictEqual(outcome.success, false)
      assert.deepStrictEqual(outcome.historyEntry.functionResponse.response.result, {
        status: "tool_execution_failed",
        reason: "boom",
        tool_name: "boomer"
      })
    }))

  it.effect("[5] message is preferred over error as the reason", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("t", toolFailure("raw", { message: "nice" }))] })
      assert.deepStrictEqual(resultOf(yield* run(h, { name: "t" })), { status: "tool_execution_failed", reason: "nice", tool_name: "t" })
    }))

  it.effect("[6] a failure with neither message nor error gets the generic reason", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("t", { success: false })] })
      assert.deepStrictEqual(resultOf(yield* run(h, { name: "t" })), {
        status: "tool_execution_failed",
        reason: "Tool execution failed without specific error",
        tool_name: "t"
      })
    }))

  it.effect("endTurn, responseDelivered and imageMetadata pass through; responseDelivered needs success", () =>
    Effect.gen(function*() {
      const imageMetadata = { imageUrls: [{ url: "https://cdn.example/a.png" }], totalSent: 1, totalValidated: 1 }
      const h = yield* makeToolCallHarness({
        tools: [
          constantTool("voice", toolSuccess(undefined, { endTurn: true, responseDelivered: true, imageMetadata })),
          constantTool("broken_voice", toolFailure("no", { responseDelivered: true, endTurn: true }))
        ]
      })
      const ok = history(yield* run(h, { name: "voice" }))
      assert.strictEqual(ok.endTurn, true)
      assert.strictEqual(ok.responseDelivered, true)
      assert.deepStrictEqual(ok.historyEntry.imageMetadata, imageMetadata)
      const failed = history(yield* run(h, { name: "broken_voice" }))
      assert.strictEqual(failed.endTurn, true)
      assert.strictEqual(failed.responseDelivered, false)
    }))

  it.effect("the call is dispatched by its trimmed name; the response keeps the name as the model sent it", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [echoTool] })
      const outcome = history(yield* run(h, { name: " echo_tool ", args: { text: "x" } }))
      assert.strictEqual(outcome.success, true)
      assert.strictEqual(outcome.functionName, "echo_tool")
      assert.strictEqual(outcome.historyEntry.functionResponse.name, " echo_tool ")
    }))

  it.effect("[78] an alias dispatches its target; the history keeps the alias the model used", () =>
    Effect.gen(function*() {
      const memory = yield* makeRecordingTool("create_long_term_memory", () => Effect.succeed(toolSuccess({ saved: true })))
      const h = yield* makeToolCallHarness({ tools: [memory.tool], aliases: [["remember_this_fact", "create_long_term_memory"]] })
      const outcome = history(yield* run(h, { name: "remember_this_fact", args: { fact: "likes tea" } }))
      assert.strictEqual(outcome.success, true)
      assert.deepStrictEqual((yield* Ref.get(memory.calls)).map((c) => c.args), [{ fact: "likes tea" }])
      assert.strictEqual(outcome.historyEntry.functionResponse.name, "remember_this_fact")
    }))
})

describe("executeToolCall: validation (step 1)", () => {
  it.effect("[13] a call without a name aborts with error, logged, nothing executed", () =>
    Effect.gen(function*() {
      const echo = yield* makeRecordingTool("echo_tool")
      const h = yield* makeToolCallHarness({ tools: [echo.tool] })
      for (const malformed of [undefined, {}, { name: 42 }, "echo_tool"]) {
        const outcome = yield* run(h, malformed)
        assert.strictEqual(outcome._tag, "Abort")
        if (outcome._tag === "Abort") assert.strictEqual(outcome.status, "error")
      }
      assert.strictEqual((yield* Ref.get(echo.calls)).length, 0)
      const logged = yield* h.logs.matching("Malformed function call")
      assert.strictEqual(logged.length, 4)
      assert.isTrue(logged.every((line) => line.level === "ERROR"))
    }))

  it.effect("[14] a blank name aborts with error, without a log, nothing executed", () =>
    Effect.gen(function*() {
      const echo = yield* makeRecordingTool("echo_tool")
      const h = yield* makeToolCallHarness({ tools: [echo.tool] })
      const outcome = yield* run(h, { name: "   ", args: {} })
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "error")
      assert.strictEqual((yield* Ref.get(echo.calls)).length, 0)
      assert.strictEqual((yield* h.logs.matching("Malformed")).length, 0)
      assert.strictEqual((yield* h.registry.executionHistory()).length, 0)
    }))

  it.effect("arguments that are not a JSON object are refused as a failed call and cleared from the replay", () =>
    Effect.gen(function*() {
      const echo = yield* makeRecordingTool("echo_tool")
      const h = yield* makeToolCallHarness({ tools: [echo.tool] })
      for (const args of [["a"], "text", 7, null]) {
        const outcome = history(yield* run(h, { name: "echo_tool", args }))
        assert.strictEqual(outcome.success, false)
        assert.strictEqual(outcome.historyEntry.functionCall.args, undefined)
        const result = outcome.historyEntry.functionResponse.response.result as { status: string; reason: string }
        assert.strictEqual(result.status, "tool_execution_failed")
        assert.include(result.reason, "must be a JSON object")
      }
      assert.strictEqual((yield* Ref.get(echo.calls)).length, 0)
    }))

  it.effect("bad arguments for a Schema tool become a failed history entry (Schema decode)", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [echoTool] })
      const outcome = history(yield* run(h, { name: "echo_tool", args: { text: 5 } }))
      assert.strictEqual(outcome.success, false)
      const result = outcome.historyEntry.functionResponse.response.result as { reason: string }
      assert.include(result.reason, "Invalid arguments for echo_tool")
      assert.include(result.reason, "text")
    }))

  it.effect("missing args dispatch with {}", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("noargs")
      const h = yield* makeToolCallHarness({ tools: [tool.tool] })
      history(yield* run(h, { name: "noargs" }))
      assert.deepStrictEqual((yield* Ref.get(tool.calls)).map((c) => c.args), [{}])
    }))
})

describe("executeToolCall: failing tools never take the loop down", () => {
  it.effect("a ToolError becomes a failed entry with its userMessage as the reason", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [failingTool("lookup", "HTTP 500", "The lookup service is down.")] })
      const outcome = history(yield* run(h, { name: "lookup" }))
      assert.strictEqual(outcome.success, false)
      assert.deepStrictEqual(outcome.historyEntry.functionResponse.response.result, {
        status: "tool_execution_failed",
        reason: "The lookup service is down.",
        tool_name: "lookup"
      })
    }))

  it.effect("[issue 25] a tool that dies becomes a failed entry: the model reads the class, the defect's message goes to the log and the thought log", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [dyingTool("crashy", "null is not a function")] })
      const outcome = history(yield* run(h, { name: "crashy" }))
      assert.strictEqual(outcome.success, false)
      assert.deepStrictEqual(outcome.historyEntry.functionResponse.response.result, {
        status: "tool_execution_failed",
        reason: "Tool 'crashy' failed: an internal error.",
        tool_name: "crashy"
      })
      const crashLog = yield* h.logs.matching("Tool 'crashy' crashed")
      assert.strictEqual(crashLog[0]?.level, "ERROR")
      assert.include(crashLog[0]?.message ?? "", "null is not a function")
      const [notice] = yield* h.thoughtLog.notices
      assert.strictEqual(notice?.description, "Tool 'crashy' failed: an internal error. [detail: null is not a function]")
    }))

  it.effect("a tool that throws synchronously (outside Effect) is a failed entry too", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [rawTool({ name: "thrower", execute: () => { throw new Error("sync boom") } })]
      })
      const outcome = history(yield* run(h, { name: "thrower" }))
      assert.strictEqual(outcome.success, false)
      assert.notInclude(JSON.stringify(outcome.historyEntry.functionResponse.response.result), "sync boom")
      assert.include((yield* h.thoughtLog.notices)[0]?.description ?? "", "sync boom")
    }))

  it.effect("a failed call posts a hidden tool_failed notice with redacted, capped JSON details", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("uploader", toolFailure("upload refused", { data: { blob: "x".repeat(5000) } }))]
      })
      yield* run(h, { name: "uploader", args: { api_key: "sk-live-123", file: "a.txt", nested: { accessToken: "t0k" } } })
      const notices = yield* h.thoughtLog.notices
      assert.strictEqual(notices.length, 1)
      const notice = notices[0]!
      assert.strictEqual(notice.kind, "tool_failed")
      assert.strictEqual(notice.severity, "error")
      assert.strictEqual(notice.description, "upload refused")
      assert.strictEqual(notice.channelId, "channel-1")
      assert.isAtMost(notice.details!.length, 1800)
      assert.notInclude(notice.details!, "sk-live-123")
      assert.notInclude(notice.details!, "t0k")
      assert.include(notice.details!, "a.txt")
    }))
})

describe("executeToolCall: ToolContext (step 3)", () => {
  it.effect("[12] showKillHint is false at iteration 19 and true from 20", () =>
    Effect.gen(function*() {
      const probe = yield* makeRecordingTool("probe")
      const h = yield* makeToolCallHarness({ tools: [probe.tool] })
      yield* run(h, { name: "probe" }, { iteration: 19 })
      yield* run(h, { name: "probe" }, { iteration: 20 })
      yield* run(h, { name: "probe" }, { iteration: 21 })
      const hints = (yield* Ref.get(probe.calls)).map((c) => [c.context.iteration, c.context.showKillHint])
      assert.deepStrictEqual(hints, [[19, false], [20, true], [21, true]])
    }))

  it.effect("the context carries the turn, the attempt and the live turn state", () =>
    Effect.gen(function*() {
      const probe = yield* makeRecordingTool("probe")
      const h = yield* makeToolCallHarness({ tools: [probe.tool], turn: { userId: "u-9", locale: "fr" } })
      yield* run(h, { name: "probe" })
      const context = (yield* Ref.get(probe.calls))[0]!.context
      assert.strictEqual(context.channelId, "channel-1")
      assert.strictEqual(context.guildId, "guild-1")
      assert.strictEqual(context.userId, "u-9")
      assert.strictEqual(context.locale, "fr")
      assert.strictEqual(context.provider, testAttempt.provider)
      assert.strictEqual(context.model, testAttempt.model)
      assert.strictEqual(context.turnState, h.state)
      assert.strictEqual(context.abortSignal.aborted, false)
    }))

  it.effect("the context carries the turn's whole origin: thread parent, persona and impersonation included", () =>
    Effect.gen(function*() {
      const probe = yield* makeRecordingTool("probe")
      const persona = { id: "p-1", name: "Nerine", avatarUrl: "https://cdn.example/nerine.png", systemPrompt: "You are Nerine." }
      const origin = {
        channelId: "thread-3",
        parentChannelId: "channel-1",
        guildId: "guild-1",
        userId: "u-9",
        messageId: "m-4",
        isDM: false,
        locale: "de",
        persona,
        isUserImpersonation: true,
        impersonatedUserId: "u-2"
      }
      const h = yield* makeToolCallHarness({ tools: [probe.tool], turn: origin })
      yield* run(h, { name: "probe" })
      const context = (yield* Ref.get(probe.calls))[0]!.context
      assert.deepStrictEqual(turnOriginOf(context), origin)
    }))

  it.effect("progress notices reach the sink unless user errors are not surfaced", () =>
    Effect.gen(function*() {
      const chatty = rawTool({
        name: "chatty",
        execute: () => Effect.as(Effect.flatMap(ToolContext, (ctx) => ctx.progress("Searching the web…")), toolSuccess())
      })
      const loud = yield* makeToolCallHarness({ tools: [chatty] })
      yield* run(loud, { name: "chatty" })
      assert.deepStrictEqual(yield* loud.sink.notices, [UserNotice.ToolProgress({ tool: "chatty", text: "Searching the web…" })])
      const quiet = yield* makeToolCallHarness({ tools: [chatty], turn: { shouldSurfaceUserErrors: false } })
      yield* run(quiet, { name: "chatty" })
      assert.deepStrictEqual(yield* quiet.sink.notices, [])
    }))
})

describe("executeToolCall: pre-tool text (steps 13–14)", () => {
  it.effect("[48] pre-tool text is kept on the history entry", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("create_long_term_memory", toolSuccess())] })
      const outcome = history(yield* run(h, { name: "create_long_term_memory", args: {} }, { text: "Yeah, let me remember that." }))
      assert.deepStrictEqual(outcome.historyEntry.preToolCallTextParts, [{ type: "text", text: "Yeah, let me remember that." }])
      assert.strictEqual((yield* h.logs.matching("pre-tool text"))[0]?.level, "INFO")
    }))

  it.effect("[49] blank pre-tool text is omitted", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("t", toolSuccess())] })
      const outcome = history(yield* run(h, { name: "t" }, { text: "   " }))
      assert.isFalse("preToolCallTextParts" in outcome.historyEntry)
    }))

  it.effect("[50] each call of a chain carries only its own pass's text", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("a", toolSuccess()), constantTool("b", toolSuccess())] })
      const first = history(yield* run(h, { name: "a" }, { text: "First," }))
      const second = history(yield* run(h, { name: "b" }, { text: "then second." }))
      assert.deepStrictEqual(first.historyEntry.preToolCallTextParts, [{ type: "text", text: "First," }])
      assert.deepStrictEqual(second.historyEntry.preToolCallTextParts, [{ type: "text", text: "then second." }])
    }))
})

describe("executeToolCall: usage stats and deliberate notices (step 8)", () => {
  it.effect("a successful call in a guild records tool_used under the tool's name", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [echoTool] })
      yield* run(h, { name: "echo_tool", args: { text: "a" } })
      assert.deepStrictEqual(yield* h.stats.next, { toolName: "echo_tool", guildId: "guild-1" })
    }))

  it.effect("failed calls and DM calls record nothing", () =>
    Effect.gen(function*() {
      const guild = yield* makeToolCallHarness({ tools: [failingTool("bad", "no")] })
      yield* run(guild, { name: "bad" })
      const dm = yield* makeToolCallHarness({ tools: [echoTool], turn: { isDM: true, guildId: undefined } })
      yield* run(dm, { name: "echo_tool", args: { text: "a" } })
      yield* Effect.yieldNow
      yield* Effect.yieldNow
      assert.strictEqual(yield* guild.stats.pending, 0)
      assert.strictEqual(yield* dm.stats.pending, 0)
    }))

  it.effect("a stats store that hangs or crashes neither delays nor fails the call", () =>
    Effect.gen(function*() {
      const { ToolUsageStats } = yield* Effect.promise(() => import("../../src/tools/ToolUsageStats"))
      for (const record of [() => Effect.never, () => Effect.die(new Error("db down"))]) {
        const h = yield* makeToolCallHarness({ tools: [echoTool] })
        const outcome = yield* executeToolCall({ ...callInput({ name: "echo_tool", args: { text: "a" } }), iteration: 0, attempt: testAttempt }).pipe(
          Effect.provideService(ToolUsageStats, { record }),
          h.run
        )
        assert.strictEqual(history(outcome).success, true)
      }
    }))
})

describe("executeToolCall: deliberate tool mode (steps 5, 7, 8)", () => {
  const deliberate = (allowedNames: ReadonlyArray<string>, active = true) => ({
    ...deliberateModeOff,
    active,
    allowedNames,
    contextTurns: 2,
    triggerMatchByToolName: new Map([["allowed_tool", { trigger: "use `allowed` now", source: "message" }]])
  })

  it.effect("[22] a tool not exposed is blocked: not executed, structured block object replayed, counts as a failure", () =>
    Effect.gen(function*() {
      const blocked = yield* makeRecordingTool("blocked_tool")
      const h = yield* makeToolCallHarness({
        tools: [blocked.tool, constantTool("allowed_tool", toolSuccess())],
        turn: { deliberate: deliberate(["allowed_tool"]) }
      })
      const outcome = history(yield* run(h, { name: "blocked_tool", args: { x: 1 } }))
      assert.strictEqual(outcome.success, false)
      assert.strictEqual(outcome.durationMs, 0)
      assert.strictEqual((yield* Ref.get(blocked.calls)).length, 0)
      assert.strictEqual((yield* h.registry.executionHistory()).length, 0)
      const result = outcome.historyEntry.functionResponse.response.result as Record<string, unknown>
      assert.deepStrictEqual(result, {
        status: "blocked_by_deliberate_tool_mode",
        functionName: "blocked_tool",
        allowedToolNames: ["allowed_tool"],
        reason: "Tool \"blocked_tool\" was not exposed for this deliberate tool mode turn."
      })
      assert.include(String(result["reason"]), "not exposed")
    }))

  it.effect("[23] deliberate mode with an empty allowlist blocks nothing", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [constantTool("any_tool", toolSuccess())], turn: { deliberate: deliberate([]) } })
      assert.strictEqual(history(yield* run(h, { name: "any_tool" })).success, true)
    }))

  it.effect("[24] an allowlist without deliberate mode blocks nothing", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("any_tool", toolSuccess())],
        turn: { deliberate: deliberate(["allowed_tool"], false) }
      })
      assert.strictEqual(history(yield* run(h, { name: "any_tool" })).success, true)
    }))

  it.effect("[25] a blocked call records no stats, posts no trigger notice and warns with the allowed names", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("blocked_tool", toolSuccess()), constantTool("allowed_tool", toolSuccess())],
        turn: {
          deliberate: {
            ...deliberate(["allowed_tool", "other_tool"]),
            triggerMatchByToolName: new Map([["blocked_tool", { trigger: "x", source: "message" }]])
          }
        }
      })
      yield* run(h, { name: "blocked_tool" })
      yield* Effect.yieldNow
      assert.strictEqual(yield* h.stats.pending, 0)
      const notices = yield* h.thoughtLog.notices
      assert.isFalse(notices.some((notice) => notice.kind === "deliberate_trigger"))
      // The failure notice carries the structured block object for operators.
      assert.include(notices.find((notice) => notice.kind === "tool_failed")?.details ?? "", "blocked_by_deliberate_tool_mode")
      const warn = yield* h.logs.matching("blocked by deliberate tool mode")
      assert.strictEqual(warn[0]?.level, "WARN")
      assert.include(warn[0]?.message ?? "", "allowed_tool, other_tool")
    }))

  it.effect("an allowed call posts the trigger notice (backticks replaced) and retains its affordance", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("allowed_tool", toolSuccess())],
        turn: { deliberate: deliberate(["allowed_tool"]) }
      })
      assert.strictEqual(history(yield* run(h, { name: "allowed_tool" })).success, true)
      const trigger = (yield* h.thoughtLog.notices).find((notice) => notice.kind === "deliberate_trigger")
      assert.strictEqual(trigger?.severity, "info")
      assert.include(trigger?.description ?? "", "allowed_tool")
      assert.include(trigger?.description ?? "", "'use 'allowed' now'")
      assert.include(trigger?.description ?? "", "message")
      assert.deepStrictEqual(yield* h.affordances.retained("channel-1"), ["allowed_tool"])
      // contextTurns = 2: still exposed after this turn and the next one, gone after the third.
      yield* h.affordances.turnEnded("channel-1")
      yield* h.affordances.turnEnded("channel-1")
      assert.deepStrictEqual(yield* h.affordances.retained("channel-1"), ["allowed_tool"])
      yield* h.affordances.turnEnded("channel-1")
      assert.deepStrictEqual(yield* h.affordances.retained("channel-1"), [])
    }))

  it.effect("a failed call or a call outside deliberate mode retains nothing", () =>
    Effect.gen(function*() {
      const active = yield* makeToolCallHarness({
        tools: [failingTool("allowed_tool", "no")],
        turn: { deliberate: deliberate(["allowed_tool"]) }
      })
      yield* run(active, { name: "allowed_tool" })
      assert.deepStrictEqual(yield* active.affordances.retained("channel-1"), [])
      const inactive = yield* makeToolCallHarness({ tools: [constantTool("allowed_tool", toolSuccess())] })
      yield* run(inactive, { name: "allowed_tool" })
      assert.deepStrictEqual(yield* inactive.affordances.retained("channel-1"), [])
    }))
})

describe("executeToolCall: truncated arguments (step 4)", () => {
  const truncatedStm = { name: "update_short_term_memory", args: { scene_state: "bedroom" }, argumentsTruncated: true }

  it.effect("[26] a truncated call is refused: not executed, args cleared, truncation reason, hidden notice, error log", () =>
    Effect.gen(function*() {
      const stm = yield* makeRecordingTool("update_short_term_memory")
      const h = yield* makeToolCallHarness({ tools: [stm.tool] })
      const outcome = history(yield* run(h, truncatedStm, { text: "Noted." }))
      assert.strictEqual(outcome.success, false)
      assert.strictEqual((yield* Ref.get(stm.calls)).length, 0)
      assert.strictEqual(outcome.historyEntry.functionCall.args, undefined)
      assert.strictEqual(outcome.historyEntry.functionCall.name, "update_short_term_memory")
      assert.deepStrictEqual(outcome.historyEntry.preToolCallTextParts, [{ type: "text", text: "Noted." }])
      const result = outcome.historyEntry.functionResponse.response.result as Record<string, string>
      assert.strictEqual(result["status"], "tool_execution_failed")
      assert.strictEqual(result["tool_name"], "update_short_term_memory")
      assert.include(result["reason"], "truncated")
      assert.include(result["reason"], "nothing was executed or updated")
      assert.include(result["reason"], "Reissue the complete call")
      const notices = yield* h.thoughtLog.notices
      assert.strictEqual(notices.length, 1)
      assert.strictEqual(notices[0]?.kind, "tool_arguments_truncated")
      assert.include(notices[0]?.description ?? "", "truncated")
      const [log] = yield* h.logs.matching("truncated its arguments")
      assert.strictEqual(log?.level, "ERROR")
      assert.strictEqual(log?.annotations["errorType"], "TOOL_ARGUMENTS_TRUNCATED")
      assert.strictEqual(log?.annotations["channelId"], "channel-1")
      assert.deepStrictEqual(log?.annotations["recoveredKeys"], ["scene_state"])
    }))

  it.effect("[27] truncation takes precedence over the deliberate-mode gate", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [constantTool("update_short_term_memory", toolSuccess())],
        turn: { deliberate: { ...deliberateModeOff, active: true, allowedNames: ["other_tool"] } }
      })
      const result = resultOf(yield* run(h, truncatedStm)) as Record<string, string>
      assert.strictEqual(result["status"], "tool_execution_failed")
      assert.include(result["reason"], "truncated")
      assert.notInclude(result["reason"], "not exposed")
    }))

  it.effect("[28] repeated truncated calls are each a failure and never execute", () =>
    Effect.gen(function*() {
      const stm = yield* makeRecordingTool("update_short_term_memory")
      const h = yield* makeToolCallHarness({ tools: [stm.tool] })
      for (let i = 0; i < 10; i++) {
        assert.strictEqual(history(yield* run(h, truncatedStm)).success, false)
      }
      assert.strictEqual((yield* Ref.get(stm.calls)).length, 0)
    }))
})

describe("executeToolCall: the capabilities tools declare (once per turn, turn effects)", () => {
  it.effect("[32] a once-per-turn tool that succeeded is spent: a second call this turn is refused without running", () =>
    Effect.gen(function*() {
      const once = yield* makeRecordingTool("note_once", () => Effect.succeed(toolSuccess()), { oncePerTurn: true })
      const h = yield* makeToolCallHarness({ tools: [once.tool] })
      assert.strictEqual(history(yield* run(h, { name: "note_once", args: { scene_state: "kitchen" } })).success, true)
      assert.deepStrictEqual((yield* Ref.get(h.state.flags)).spentOncePerTurnTools, ["note_once"])
      const second = history(yield* run(h, { name: "note_once", args: { scene_state: "hall" } }))
      assert.strictEqual(second.success, false)
      assert.include(JSON.stringify(second.historyEntry.functionResponse.response.result), "not available for the current turn")
      assert.strictEqual((yield* Ref.get(once.calls)).length, 1)
    }))

  it.effect("a tool that declares nothing may run again; a failed once-per-turn call spends nothing", () =>
    Effect.gen(function*() {
      const again = yield* makeRecordingTool("note_again", () => Effect.succeed(toolSuccess()))
      const h = yield* makeToolCallHarness({ tools: [again.tool, { ...failingTool("note_once", "db"), oncePerTurn: true }] })
      yield* run(h, { name: "note_once" })
      assert.deepStrictEqual((yield* Ref.get(h.state.flags)).spentOncePerTurnTools, [])
      assert.isTrue(history(yield* run(h, { name: "note_again" })).success)
      assert.isTrue(history(yield* run(h, { name: "note_again" })).success)
      assert.strictEqual((yield* Ref.get(again.calls)).length, 2)
    }))

  it.effect("turn effect: carried ⇒ applied, none or a failure ⇒ cleared (null), a tool declaring none ⇒ undefined", () =>
    Effect.gen(function*() {
      const wave = { id: "111", name: "wave" }
      const picker = yield* makeRecordingTool("pick_decoration", (args) =>
        args["fail"] === true
          ? Effect.succeed(toolFailure("no sticker", { turnEffect: TurnEffect.StickerSelected({ sticker: wave }) }))
          : Effect.succeed(toolSuccess({ picked: args["id"] }, args["id"] === "111" ? { turnEffect: TurnEffect.StickerSelected({ sticker: wave }) } : {})),
        { turnEffect: "StickerSelected" })
      const undeclared = constantTool("echo_effect", toolSuccess(undefined, { turnEffect: TurnEffect.StickerSelected({ sticker: wave }) }))
      const h = yield* makeToolCallHarness({ tools: [picker.tool, undeclared] })
      const picked = history(yield* run(h, { name: "pick_decoration", args: { id: "111" } }))
      assert.deepStrictEqual(picked.stickerSelection, wave)
      // The loop keeps the latest choice: a later miss clears the earlier pick.
      const missed = history(yield* run(h, { name: "pick_decoration", args: { id: "999" } }))
      assert.strictEqual(missed.stickerSelection, null)
      // A failed result never applies its effect.
      const failed = history(yield* run(h, { name: "pick_decoration", args: { fail: true } }))
      assert.strictEqual(failed.stickerSelection, null)
      const again = history(yield* run(h, { name: "pick_decoration", args: { id: "111" } }))
      assert.deepStrictEqual(again.stickerSelection, wave)
      // Only a tool that declares the effect may set it.
      const other = history(yield* run(h, { name: "echo_effect" }))
      assert.strictEqual(other.stickerSelection, undefined)
      // The effect never reaches the model.
      assert.notInclude(JSON.stringify(again.historyEntry), "wave")
    }))
})

describe("executeToolCall: log levels of the registry gates (spec §15)", () => {
  it.effect("unknown tool ⇒ ERROR, provider gate ⇒ ERROR, context gate ⇒ WARN, completion ⇒ INFO; each a failed entry", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [
          constantTool("web_search", toolSuccess()),
          constantTool("nai_only", toolSuccess(), { isAvailableFor: (provider) => provider === "novelai" }),
          constantTool("once_per_turn", toolSuccess(), { isAvailableForContext: () => false })
        ]
      })
      const reasons: Array<string> = []
      for (const name of ["web_serch", "nai_only", "once_per_turn"]) {
        const outcome = history(yield* run(h, { name }))
        assert.strictEqual(outcome.success, false, name)
        reasons.push((outcome.historyEntry.functionResponse.response.result as { reason: string }).reason)
      }
      assert.include(reasons[0], "Did you mean 'web_search'?")
      assert.include(reasons[1], "not available for provider 'openai-compatible'")
      assert.include(reasons[2], "not available for the current turn")
      const levelOf = (fragment: string) => Effect.map(h.logs.matching(fragment), (lines) => lines.map((line) => line.level))
      assert.deepStrictEqual(yield* levelOf("Tool 'web_serch' not found"), ["ERROR"])
      assert.deepStrictEqual(yield* levelOf("not available for provider"), ["ERROR"])
      assert.deepStrictEqual(yield* levelOf("not available for the current turn"), ["WARN"])
      assert.deepStrictEqual(yield* levelOf("Function call completed:"), ["INFO", "INFO", "INFO"])
    }))
})
