import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Duration, Effect, Exit, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { LoopConfig } from "../../src/config/LoopConfig"
import { toolSuccess } from "../../src/domain/ToolResult"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { makeHangingTool, makeRecordingTool, rawTool } from "../support/tools/testTools"
import { callInput, makeToolCallHarness, testAttempt, type ToolCallHarness } from "../support/tools/toolCallHarness"

const run = (h: ToolCallHarness, rawCall: unknown) =>
  h.run(executeToolCall({ ...callInput(rawCall), iteration: 0, attempt: testAttempt }))

const reasonOf = (outcome: Effect.Success<ReturnType<typeof run>>): string => {
  if (outcome._tag !== "History") throw new Error(`expected History, got ${outcome._tag}`)
  return (outcome.historyEntry.functionResponse.response.result as { reason: string }).reason
}

/** A tool that takes `duration` of Clock time, then succeeds. */
const slowTool = (name: string, duration: Duration.Input) =>
  rawTool({ name, execute: () => Effect.as(Effect.sleep(duration), toolSuccess({ done: name })) })

describe("executeToolCall: timeout race (step 6, design decision 10)", () => {
  it.effect("[19] a tool that never resolves is still running at 9 999 ms and times out at exactly 10 s", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool], loop: { toolExecutionTimeout: Duration.seconds(10) } })
      const fiber = yield* Effect.forkChild(run(h, { name: "hang", args: {} }))
      yield* Deferred.await(hanging.started)
      yield* TestClock.adjust(Duration.millis(9_999))
      assert.isTrue(fiber.pollUnsafe() === undefined, "still running one millisecond before the timeout")
      assert.isFalse(yield* Ref.get(hanging.finalized))
      yield* TestClock.adjust(Duration.millis(1))
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(reasonOf(outcome), "Tool \"hang\" timed out after 10s.")
      if (outcome._tag === "History") {
        assert.strictEqual(outcome.success, false)
        assert.strictEqual(outcome.durationMs, 10_000)
      }
      // The loser was interrupted: its finalizer ran and its AbortSignal fired.
      yield* hanging.whenFinalized
      assert.isTrue(yield* Ref.get(hanging.finalized))
      assert.isTrue((yield* Ref.get(hanging.signal))?.aborted)
      const [record] = yield* h.registry.executionHistory()
      assert.deepStrictEqual([record?.success, record?.error], [false, "interrupted"])
      const [done] = yield* h.logs.matching("Function call completed: hang")
      assert.strictEqual(done?.level, "INFO")
      assert.include(done?.message ?? "", "(10000ms)")
    }))

  it.effect("[19] the default 300 s timeout reads 300s", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool] })
      const fiber = yield* Effect.forkChild(run(h, { name: "hang" }))
      yield* Deferred.await(hanging.started)
      yield* TestClock.adjust(Duration.seconds(300))
      assert.strictEqual(reasonOf(yield* Fiber.join(fiber)), "Tool \"hang\" timed out after 300s.")
    }))

  it.effect("[21] each call of a chain gets a fresh timer: two 6 s tools under a 10 s timeout both succeed", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({
        tools: [slowTool("first", "6 seconds"), slowTool("second", "6 seconds")],
        loop: { toolExecutionTimeout: Duration.seconds(10) }
      })
      const chain = Effect.gen(function*() {
        const first = yield* run(h, { name: "first" })
        const second = yield* run(h, { name: "second" })
        return [first, second] as const
      })
      const fiber = yield* Effect.forkChild(chain)
      yield* TestClock.adjust(Duration.seconds(6))
      yield* TestClock.adjust(Duration.seconds(6))
      const [first, second] = yield* Fiber.join(fiber)
      assert.deepStrictEqual([first._tag, second._tag], ["History", "History"])
      if (first._tag === "History" && second._tag === "History") {
        assert.deepStrictEqual([first.success, second.success], [true, true])
        assert.deepStrictEqual(second.historyEntry.functionResponse.response.result, { done: "second" })
        assert.strictEqual(second.durationMs, 6_000)
      }
    }))

  it.effect("a tool finishing just before the timeout wins the race", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness({ tools: [slowTool("edge", Duration.millis(9_999))], loop: { toolExecutionTimeout: Duration.seconds(10) } })
      const fiber = yield* Effect.forkChild(run(h, { name: "edge" }))
      yield* TestClock.adjust(Duration.seconds(10))
      const outcome = yield* Fiber.join(fiber)
      assert.isTrue(outcome._tag === "History" && outcome.success)
    }))
})

/** A tool that never resolves and whose cleanup takes `cleanup` of Clock time (uninterruptible, as a stuck socket close is). */
const slowCleanupTool = (name: string, cleanup: Duration.Input) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const cleaned = yield* Deferred.make<void>()
    const tool = rawTool({
      name,
      execute: () =>
        Effect.andThen(Deferred.succeed(started, undefined), Effect.never).pipe(
          Effect.ensuring(Effect.andThen(Effect.sleep(cleanup), Deferred.succeed(cleaned, undefined)))
        )
    })
    return { tool, started, cleaned }
  })

describe("executeToolCall: the race is decided at once (issue 11.7)", () => {
  it.effect("a tool whose finalizer takes 60 s: the timeout result arrives at exactly TOOL_EXECUTION_TIMEOUT_MS, the cleanup runs after", () =>
    Effect.gen(function*() {
      const slow = yield* slowCleanupTool("stuck", "60 seconds")
      const h = yield* makeToolCallHarness({ tools: [slow.tool], loop: { toolExecutionTimeout: Duration.seconds(10) } })
      const fiber = yield* Effect.forkChild(run(h, { name: "stuck" }))
      yield* Deferred.await(slow.started)
      yield* TestClock.adjust(Duration.millis(9_999))
      assert.isTrue(fiber.pollUnsafe() === undefined)
      yield* TestClock.adjust(Duration.millis(1))
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(reasonOf(outcome), "Tool \"stuck\" timed out after 10s.")
      assert.strictEqual(outcome._tag === "History" ? outcome.durationMs : -1, 10_000)
      assert.isFalse(yield* Deferred.isDone(slow.cleaned), "the loser's cleanup is still running in the background")
      yield* TestClock.adjust(Duration.seconds(60))
      yield* Deferred.await(slow.cleaned)
    }))

  it.effect("a tool whose finalizer takes 60 s: /kill wins within a millisecond of Clock time", () =>
    Effect.gen(function*() {
      const slow = yield* slowCleanupTool("stuck", "60 seconds")
      const h = yield* makeToolCallHarness({ tools: [slow.tool], loop: { toolExecutionTimeout: Duration.seconds(10) } })
      const fiber = yield* Effect.forkChild(run(h, { name: "stuck" }))
      yield* Deferred.await(slow.started)
      yield* TestClock.adjust(Duration.seconds(2))
      yield* h.signals.kill({ requesterId: "user-1" })
      yield* TestClock.adjust(Duration.millis(1))
      const outcome = Option.getOrThrow(Option.fromNullishOr(fiber.pollUnsafe()))
      assert.deepStrictEqual(Exit.map(outcome, (o) => (o._tag === "Abort" ? o.status : o._tag)), Exit.succeed("stopped_by_user"))
      assert.isFalse(yield* Deferred.isDone(slow.cleaned))
    }))

  it.effect("an uninterruptible tool: the timeout still returns on time, and its result, arriving later, is ignored", () =>
    Effect.gen(function*() {
      const tool = rawTool({ name: "stubborn", execute: () => Effect.uninterruptible(Effect.as(Effect.sleep("30 seconds"), toolSuccess({ late: true }))) })
      const h = yield* makeToolCallHarness({ tools: [tool], loop: { toolExecutionTimeout: Duration.seconds(10) } })
      const fiber = yield* Effect.forkChild(run(h, { name: "stubborn" }))
      yield* TestClock.adjust(Duration.seconds(10))
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(reasonOf(outcome), "Tool \"stubborn\" timed out after 10s.")
      yield* TestClock.adjust(Duration.seconds(30))
    }))
})

/** LoopConfig as read from the environment `env`. */
const loopConfigFrom = (env: Record<string, string>) =>
  Effect.provide(LoopConfig, LoopConfig.layer).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env)))

describe("executeToolCall: TOOL_EXECUTION_TIMEOUT_MS (spec §10, design §5.2)", () => {
  it.effect("[20] 500 is clamped to the 10 s minimum: the tool is still running at 500 ms and times out at 10 s", () =>
    Effect.gen(function*() {
      const settings = yield* loopConfigFrom({ TOOL_EXECUTION_TIMEOUT_MS: "500" })
      assert.strictEqual(Duration.toMillis(settings.toolExecutionTimeout), 10_000)
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool], loop: { toolExecutionTimeout: settings.toolExecutionTimeout } })
      const fiber = yield* Effect.forkChild(run(h, { name: "hang" }))
      yield* Deferred.await(hanging.started)
      yield* TestClock.adjust(Duration.millis(500))
      assert.isTrue(fiber.pollUnsafe() === undefined)
      yield* TestClock.adjust(Duration.millis(9_500))
      assert.strictEqual(reasonOf(yield* Fiber.join(fiber)), "Tool \"hang\" timed out after 10s.")
    }))

  it.effect("[20] unset ⇒ 300 s; not a number ⇒ a start-up error naming the variable (design §5.2 over the spec's silent default)", () =>
    Effect.gen(function*() {
      assert.strictEqual(Duration.toMillis((yield* loopConfigFrom({})).toolExecutionTimeout), 300_000)
      const error = yield* Effect.flip(loopConfigFrom({ TOOL_EXECUTION_TIMEOUT_MS: "abc" }))
      assert.include(String(error), "TOOL_EXECUTION_TIMEOUT_MS")
    }))
})

describe("executeToolCall: kill and stop (steps 2 and 6, spec §2.8)", () => {
  it.effect("[18] /kill while the tool is mid-flight: the tool is interrupted, no history entry, stopped_by_user", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool] })
      const fiber = yield* Effect.forkChild(run(h, { name: "hang" }))
      yield* Deferred.await(hanging.started)
      yield* h.signals.kill({ requesterId: "user-1" })
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "stopped_by_user")
      yield* hanging.whenFinalized
      assert.isTrue(yield* Ref.get(hanging.finalized), "the tool's finalizer ran")
      assert.isTrue((yield* Ref.get(hanging.signal))?.aborted, "the tool's AbortSignal fired")
      assert.strictEqual((yield* h.thoughtLog.notices).length, 0, "nothing is reported for a killed call")
      // The stop stays registered for the loop to consume.
      assert.strictEqual(Option.map(yield* h.signals.current, (request) => request._tag).pipe(Option.getOrNull), "Stop")
    }))

  it.effect("[18] a kill signal without a registered stop yields a failed 'was killed' entry", () =>
    Effect.gen(function*() {
      const killSwitch = yield* Deferred.make<void>()
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({
        tools: [hanging.tool],
        // The kill arrives as a signal only: the turn's listeners hear it, no stop is registered.
        signals: (real) => ({
          ...real,
          onKill: (listener) => Effect.as(Effect.forkDetach(Effect.andThen(Deferred.await(killSwitch), Effect.sync(listener))), () => {})
        })
      })
      const fiber = yield* Effect.forkChild(run(h, { name: "hang" }))
      yield* Deferred.await(hanging.started)
      yield* Deferred.succeed(killSwitch, undefined)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(reasonOf(outcome), "Tool \"hang\" was killed.")
      yield* hanging.whenFinalized
      assert.isTrue(yield* Ref.get(hanging.finalized))
    }))

  it.effect("kill before dispatch: stopped_by_user and the tool never starts", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool] })
      yield* h.signals.kill()
      const outcome = yield* run(h, { name: "hang" })
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "stopped_by_user")
      assert.isFalse(yield* Deferred.isDone(hanging.started))
      assert.strictEqual((yield* h.registry.executionHistory()).length, 0)
    }))

  it.effect("[15] a plain stop registered before the call aborts before execution and is not cleared", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("t")
      const h = yield* makeToolCallHarness({ tools: [tool.tool] })
      yield* h.signals.requestStop({ requesterId: "user-1" })
      const outcome = yield* run(h, { name: "t" })
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "stopped_by_user")
      assert.strictEqual((yield* Ref.get(tool.calls)).length, 0)
      assert.isTrue(Option.isSome(yield* h.signals.current))
    }))

  it.effect("[16] a follow-up registered before the call is cleared once and the chain continues", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("t", () => Effect.succeed(toolSuccess({ ok: 1 })))
      const h = yield* makeToolCallHarness({ tools: [tool.tool] })
      yield* h.signals.requestFollowUp
      const first = yield* run(h, { name: "t" })
      assert.isTrue(first._tag === "History" && first.success)
      assert.isTrue(Option.isNone(yield* h.signals.current), "the follow-up was cleared")
      const second = yield* run(h, { name: "t" })
      assert.isTrue(second._tag === "History" && second.success)
      assert.strictEqual((yield* Ref.get(tool.calls)).length, 2)
      assert.strictEqual((yield* h.logs.matching("Follow-up queued")).length, 1)
    }))

  it.effect("[17] a stop registered while the tool runs (no kill) aborts after the race; the result is never replayed", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness()
      const tool = yield* makeRecordingTool("t", () => Effect.as(h.signals.requestStop(), toolSuccess({ secret: "unseen" })))
      yield* h.registry.register(tool.tool)
      const outcome = yield* run(h, { name: "t" })
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "stopped_by_user")
      assert.strictEqual((yield* Ref.get(tool.calls)).length, 1)
      assert.strictEqual((yield* h.logs.matching("Function call completed: t")).length, 1)
    }))

  it.effect("[16] a follow-up registered while the tool runs is cleared after the race and the result is kept", () =>
    Effect.gen(function*() {
      const h = yield* makeToolCallHarness()
      yield* h.registry.register(
        (yield* makeRecordingTool("t", () => Effect.as(h.signals.requestFollowUp, toolSuccess({ kept: true })))).tool
      )
      const outcome = yield* run(h, { name: "t" })
      assert.isTrue(outcome._tag === "History" && outcome.success)
      assert.isTrue(Option.isNone(yield* h.signals.current))
    }))

  it.effect("interrupting executeToolCall itself interrupts the tool (the interruption is never swallowed)", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("hang")
      const h = yield* makeToolCallHarness({ tools: [hanging.tool] })
      const fiber = yield* Effect.forkChild(run(h, { name: "hang" }))
      yield* Deferred.await(hanging.started)
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.hasInterrupts(exit))
      yield* hanging.whenFinalized
      assert.isTrue(yield* Ref.get(hanging.finalized))
      assert.isTrue((yield* Ref.get(hanging.signal))?.aborted)
    }))
})
