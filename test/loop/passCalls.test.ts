import { assert, describe, it } from "@effect/vitest"
import { Clock, Deferred, Duration, Effect, Exit, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import type { ToolArgs } from "../../src/domain/FunctionCall"
import { toolFailure, toolSuccess, type ToolResult } from "../../src/domain/ToolResult"
import type { Sticker } from "../../src/domain/Sticker"
import { TurnEffect } from "../../src/domain/TurnEffect"
import type { ToolHistoryEntry } from "../../src/domain/ToolHistoryEntry"
import { deliberateModeOff } from "../../src/domain/DeliberateToolMode"
import { runToolLoop, runToolLoopDetailed } from "../../src/loop/runToolLoop"
import { ToolActivity } from "../../src/loop/ToolActivity"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { makeUpdateShortTermMemoryTool, UPDATE_SHORT_TERM_MEMORY } from "../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import type { Tool } from "../../src/tools/Tool"
import { ToolContext } from "../../src/tools/ToolContext"
import { ToolError } from "../../src/tools/ToolError"
import { hangingHttpServer } from "../support/hangingHttpServer"
import { memoryStores } from "../tools/builtin/blocking/toolTestKit"
import { rawTool } from "../support/tools/testTools"
import { testAttempt } from "../support/tools/toolCallHarness"
import { withLoopHarness } from "./harness"

const attempt = { ...testAttempt, provider: "scripted" }
const loop = (extra: Partial<Parameters<typeof runToolLoop>[0]> = {}) => runToolLoop({ attempt, apiKey: undefined, ...extra })

/** When each call of a timed tool started and ended (Clock millis), and how many ran at once. */
interface Timeline {
  readonly events: Ref.Ref<ReadonlyArray<string>>
  readonly running: Ref.Ref<number>
  readonly most: Ref.Ref<number>
  readonly finalized: Ref.Ref<ReadonlyArray<string>>
}

const makeTimeline = Effect.all({
  events: Ref.make<ReadonlyArray<string>>([]),
  running: Ref.make(0),
  most: Ref.make(0),
  finalized: Ref.make<ReadonlyArray<string>>([])
})

/** A tool that takes `duration` on the Clock (forever when undefined) and records its timeline. */
const timedTool = (timeline: Timeline, name: string, duration: Duration.Input | undefined, overrides: Partial<Tool> = {}): Tool =>
  rawTool({
    name,
    execute: () =>
      Effect.gen(function*() {
        yield* Ref.update(timeline.events, (all) => [...all, `${name}+`])
        const now = yield* Ref.updateAndGet(timeline.running, (n) => n + 1)
        yield* Ref.update(timeline.most, (most) => Math.max(most, now))
        if (duration === undefined) return yield* Effect.never
        yield* Effect.sleep(duration)
        return toolSuccess({ tool: name, at: yield* Clock.currentTimeMillis })
      }).pipe(
        Effect.ensuring(Ref.update(timeline.running, (n) => n - 1)),
        Effect.onInterrupt(() => Ref.update(timeline.finalized, (all) => [...all, name]))
      ),
    ...overrides
  })

const entriesOf = (history: ReadonlyArray<ToolHistoryEntry>) =>
  history.map((entry) => [entry.functionCall.name, entry.functionResponse.response.result, entry.batch] as const)

const resultOf = (history: ReadonlyArray<ToolHistoryEntry>, name: string): unknown =>
  history.find((entry) => entry.functionCall.name === name)?.functionResponse.response.result

/** A pass calling each `[name, args]` in order, after `preText`. */
const callsWith = (list: ReadonlyArray<readonly [name: string, args?: ToolArgs]>, preText?: string) =>
  S.callTools(list.map(([name, args]) => (args === undefined ? { name } : { name, args })), preText)
const calls = (...names: ReadonlyArray<string>) => callsWith(names.map((name) => [name] as const))

describe("the calls of one pass (docs/architecture.md, \"Tool calls of one pass\")", () => {
  it.effect("three calls taking 1 s, 2 s and 3 s finish together at 3 s, not 6 s", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      const tools = [timedTool(t, "one", "1 second"), timedTool(t, "two", "2 seconds"), timedTool(t, "three", "3 seconds")]
      yield* withLoopHarness({ tools, script: [calls("one", "two", "three"), S.reply("done")] }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          yield* TestClock.adjust("2999 millis")
          assert.isTrue(fiber.pollUnsafe() === undefined, "still running before 3 s")
          yield* TestClock.adjust("1 millis")
          const outcome = yield* Fiber.join(fiber)
          assert.strictEqual(outcome.result.status, "completed")
          assert.strictEqual(yield* Clock.currentTimeMillis, 3000)
          const ended = outcome.functionHistory.map((entry) => (entry.functionResponse.response.result as { at: number }).at)
          assert.deepStrictEqual(ended, [1000, 2000, 3000])
          assert.strictEqual(yield* Ref.get(t.most), 3)
        }))
    }))

  it.effect("a /kill at 1.5 s ends all three calls at once: stopped_by_user, every tool interrupted", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      const tools = [timedTool(t, "one", "10 seconds"), timedTool(t, "two", "20 seconds"), timedTool(t, "three", undefined)]
      yield* withLoopHarness({ tools, script: [calls("one", "two", "three"), S.reply("never")] }, ({ signals }) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          yield* TestClock.adjust("1500 millis")
          assert.strictEqual(yield* Ref.get(t.running), 3)
          yield* signals.kill({ requesterId: "user-1" })
          const outcome = yield* Fiber.join(fiber)
          assert.strictEqual(outcome.result.status, "stopped_by_user")
          assert.strictEqual(yield* Clock.currentTimeMillis, 1500)
          // The losers are interrupted in the background: let their finalizers run.
          yield* Effect.yieldNow
          yield* TestClock.adjust("1 millis")
          assert.sameMembers([...(yield* Ref.get(t.finalized))], ["one", "two", "three"])
          assert.strictEqual((yield* (yield* ScriptedProbe).requests).length, 1, "no second pass")
        }))
    }))

  it.live("a /kill reaches every call on the wire: each loopback request's socket closes", () =>
    Effect.scoped(Effect.gen(function*() {
      const servers = yield* Effect.all([hangingHttpServer, hangingHttpServer, hangingHttpServer])
      const tools = servers.map((server, index) =>
        rawTool({
          name: `fetch_${index}`,
          // A plain promise: only the AbortSignal can cancel it, not fiber interruption.
          execute: () =>
            Effect.flatMap(ToolContext, (context) =>
              Effect.tryPromise({
                try: () => fetch(server.url, { signal: context.abortSignal }),
                catch: (cause) => new ToolError({ tool: `fetch_${index}`, error: String(cause) })
              })).pipe(Effect.as(toolSuccess()))
        })
      )
      yield* withLoopHarness({ tools, script: [calls("fetch_0", "fetch_1", "fetch_2"), S.reply("never")] }, ({ signals }) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(loop())
          yield* Effect.forEach(servers, (server) => Deferred.await(server.arrived))
          yield* signals.kill({ requesterId: "user-1" })
          assert.strictEqual((yield* Fiber.join(fiber)).status, "stopped_by_user")
          yield* Effect.forEach(servers, (server) =>
            Deferred.await(server.closed).pipe(Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new Error("a connection was never closed")) })))
        }))
    })))

  it.effect("a call that times out fails alone: the other two finish and all three are replayed", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      const tools = [timedTool(t, "one", "1 second"), timedTool(t, "stuck", undefined), timedTool(t, "three", "3 seconds")]
      yield* withLoopHarness({
        tools,
        loop: { toolExecutionTimeout: Duration.seconds(10) },
        script: [calls("one", "stuck", "three"), S.reply("done")]
      }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          for (let second = 0; second < 10; second++) yield* TestClock.adjust("1 second")
          const outcome = yield* Fiber.join(fiber)
          assert.strictEqual(outcome.result.status, "completed")
          assert.strictEqual(yield* Clock.currentTimeMillis, 10_000)
          assert.deepStrictEqual(outcome.result.toolCalls.map((call) => [call.name, call.success]), [["one", true], ["stuck", false], ["three", true]])
          assert.deepInclude(resultOf(outcome.functionHistory, "stuck"), { status: "tool_execution_failed" })
          assert.include(JSON.stringify(resultOf(outcome.functionHistory, "stuck")), "timed out after 10s")
          assert.deepStrictEqual(yield* Ref.get(t.finalized), ["stuck"])
        }))
    }))

  it.effect("each call's timeout is its own and fresh: with one slot, two stuck calls time out at 10 s and 20 s", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      yield* withLoopHarness({
        tools: [timedTool(t, "stuck_a", undefined), timedTool(t, "stuck_b", undefined)],
        loop: { toolExecutionTimeout: Duration.seconds(10), toolCallConcurrency: 1 },
        script: [calls("stuck_a", "stuck_b"), S.reply("done")]
      }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          for (let second = 0; second < 10; second++) yield* TestClock.adjust("1 second")
          assert.deepStrictEqual(yield* Ref.get(t.finalized), ["stuck_a"], "the first timed out at 10 s, the second only started then")
          for (let second = 0; second < 9; second++) yield* TestClock.adjust("1 second")
          assert.isTrue(fiber.pollUnsafe() === undefined)
          yield* TestClock.adjust("1 second")
          const outcome = yield* Fiber.join(fiber)
          assert.strictEqual(yield* Clock.currentTimeMillis, 20_000)
          assert.deepStrictEqual(outcome.result.toolCalls.map((call) => [call.name, call.success, call.durationMs]), [["stuck_a", false, 10_000], ["stuck_b", false, 10_000]])
        }))
    }))

  it.effect("TOOL_CALL_CONCURRENCY=2: five 1 s calls run two at a time and end at 3 s", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      const names = ["a", "b", "c", "d", "e"]
      yield* withLoopHarness({
        tools: names.map((name) => timedTool(t, name, "1 second")),
        loop: { toolCallConcurrency: 2 },
        script: [calls(...names), S.reply("done")]
      }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          yield* TestClock.adjust("2999 millis")
          assert.isTrue(fiber.pollUnsafe() === undefined)
          yield* TestClock.adjust("1 millis")
          const outcome = yield* Fiber.join(fiber)
          assert.strictEqual(outcome.result.status, "completed")
          assert.strictEqual(yield* Ref.get(t.most), 2)
          assert.deepStrictEqual(outcome.functionHistory.map((entry) => entry.functionCall.name), names, "replayed in the model's order")
        }))
    }))

  it.effect("sequential tools run one at a time in the model's order; other calls run alongside", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      const tools = [
        timedTool(t, "s1", "2 seconds", { sequential: true }),
        timedTool(t, "free", "1 second"),
        timedTool(t, "s2", "1 second", { sequential: true }),
        timedTool(t, "s3", "1 second", { sequential: true })
      ]
      yield* withLoopHarness({ tools, script: [calls("s3", "free", "s1", "s2"), S.reply("done")] }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          yield* TestClock.adjust("4 seconds")
          const outcome = yield* Fiber.join(fiber)
          const at = (name: string) => (resultOf(outcome.functionHistory, name) as { at: number }).at
          // s3 first (1 s), then s1 (2 s), then s2 (1 s); `free` alongside the first.
          assert.deepStrictEqual([at("s3"), at("free"), at("s1"), at("s2")], [1000, 1000, 3000, 4000])
          const starts = (yield* Ref.get(t.events)).filter((event) => event.endsWith("+") && event.startsWith("s"))
          assert.deepStrictEqual(starts, ["s3+", "s1+", "s2+"])
        }))
    }))

  it.effect("calls past MAX_TOOL_CALLS_PER_PASS are answered with a refusal and never run", () =>
    Effect.gen(function*() {
      const t = yield* makeTimeline
      const names = ["a", "b", "c"]
      yield* withLoopHarness({
        tools: names.map((name) => timedTool(t, name, "1 second")),
        loop: { maxToolCallsPerPass: 2, maxConsecutiveToolErrors: 1 },
        script: [calls(...names), S.reply("done")]
      }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          yield* TestClock.adjust("1 second")
          const outcome = yield* Fiber.join(fiber)
          // The refusal neither ran the tool nor counted as a failure (the error cap is 1 here).
          assert.strictEqual(outcome.result.status, "completed")
          assert.deepStrictEqual((yield* Ref.get(t.events)).filter((event) => event.endsWith("+")), ["a+", "b+"])
          assert.deepStrictEqual(outcome.functionHistory.map((entry) => entry.functionCall.name), names)
          const refusal = resultOf(outcome.functionHistory, "c")
          assert.deepInclude(refusal, { status: "tool_execution_failed", tool_name: "c" })
          assert.include(JSON.stringify(refusal), "at most 2 tool calls")
          const replayed = (yield* (yield* ScriptedProbe).requests)[1]?.functionHistory ?? []
          assert.strictEqual(replayed.length, 3, "the next pass replays one result per call")
        }))
    }))
})

const ok = (name: string, data?: unknown, overrides: Partial<Tool> = {}): Tool =>
  rawTool({ name, execute: () => Effect.succeed(toolSuccess(data)), ...overrides })
const failing = (name: string): Tool => rawTool({ name, execute: () => Effect.succeed(toolFailure(`${name} failed`)) })
const slow = (name: string, duration: Duration.Input, result: ToolResult = toolSuccess()): Tool =>
  rawTool({ name, execute: () => Effect.as(Effect.sleep(duration), result) })

describe("folding the outcomes of one pass, in the model's order", () => {
  it.effect("one entry per call in the model's order (not finishing order), all with the pass's batch; the text on the first only", () =>
    withLoopHarness({
      tools: [slow("late", "2 seconds", toolSuccess({ n: 1 })), ok("early", { n: 2 })],
      script: [callsWith([["late"], ["early"]], "Looking."), callsWith([["early"]]), S.reply("done")]
    }, () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
        yield* TestClock.adjust("2 seconds")
        const outcome = yield* Fiber.join(fiber)
        assert.deepStrictEqual(entriesOf(outcome.functionHistory), [["late", { n: 1 }, 1], ["early", { n: 2 }, 1], ["early", { n: 2 }, 2]])
        assert.deepStrictEqual(outcome.functionHistory.map((entry) => entry.preToolCallTextParts), [[{ type: "text", text: "Looking." }], undefined, undefined])
      })))

  it.effect("batches are numbered across attempts: an inherited batch never merges with this attempt's", () =>
    withLoopHarness({ tools: [ok("a")], script: [calls("a"), S.reply("done")] }, () =>
      Effect.gen(function*() {
        const inherited: ToolHistoryEntry = {
          functionCall: { name: "a" },
          functionResponse: { name: "a", response: { result: { status: "completed" } } },
          batch: 3
        }
        const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined, functionHistory: [inherited] })
        assert.deepStrictEqual(outcome.functionHistory.map((entry) => entry.batch), [3, 4])
      })))

  it.effect("consecutive errors add up over the calls of a pass: three failures in one pass reach a cap of 3", () =>
    withLoopHarness({
      tools: [failing("f1"), failing("f2"), failing("f3")],
      loop: { maxConsecutiveToolErrors: 3 },
      script: [calls("f1", "f2", "f3"), S.reply("never")]
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "error")
        assert.strictEqual(result.toolCalls.length, 3)
      })))

  it.effect("a success later in the pass resets the count: two failures then a success go on", () =>
    withLoopHarness({
      tools: [failing("f1"), failing("f2"), ok("fine")],
      loop: { maxConsecutiveToolErrors: 3 },
      script: [calls("f1", "f2", "fine"), calls("f1", "f2"), S.reply("done")]
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        // 2, reset to 0 by `fine`, then 2 more: never 3 in a row.
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.toolCalls.length, 5)
      })))

  it.effect("endTurn takes effect after the whole batch: the slower call still runs and is replayed", () =>
    Effect.gen(function*() {
      const slowDone = yield* Ref.make(false)
      const lateTool = rawTool({ name: "late", execute: () => Effect.as(Effect.andThen(Effect.sleep("1 second"), Ref.set(slowDone, true)), toolSuccess()) })
      yield* withLoopHarness({
        tools: [ok("ender", undefined, { execute: () => Effect.succeed(toolSuccess(undefined, { endTurn: true })) }), lateTool],
        script: [calls("ender", "late"), S.reply("never")]
      }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
          yield* TestClock.adjust("1 second")
          const outcome = yield* Fiber.join(fiber)
          assert.strictEqual(outcome.result.status, "completed")
          assert.isTrue(yield* Ref.get(slowDone))
          assert.deepStrictEqual(outcome.functionHistory.map((entry) => entry.functionCall.name), ["ender", "late"])
          assert.strictEqual((yield* (yield* ScriptedProbe).requests).length, 1, "no second pass")
        }))
    }))

  it.effect("a context restart takes effect after the batch: the other calls' entries are kept, the next pass runs", () =>
    withLoopHarness({
      tools: [
        ok("restart", { type: "context_restart_youtube", enhanced_context_item: { text: "transcript" } }),
        ok("plain", { plain: true })
      ],
      script: [calls("restart", "plain"), S.reply("done")]
    }, () =>
      Effect.gen(function*() {
        const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined })
        assert.strictEqual(outcome.result.status, "completed")
        assert.deepStrictEqual(outcome.result.toolCalls.map((call) => [call.name, call.response]), [["restart", null], ["plain", { plain: true }]])
        assert.deepStrictEqual(outcome.functionHistory.map((entry) => entry.functionCall.name), ["plain"])
      })))

  it.effect("a restart in the batch always gets the next pass, even where the other calls alone would end the turn", () =>
    withLoopHarness({
      tools: [
        ok("restart", { type: "context_restart_youtube", enhanced_context_item: { text: "transcript" } }, { requiresFollowUp: false }),
        ok("plain", undefined, { requiresFollowUp: false })
      ],
      // NovelAI after pre-tool text: calls that need no follow-up end the turn, unless one restarted the context.
      script: [callsWith([["restart"], ["plain"]], "Looking."), S.reply(" Found it.")]
    }, () =>
      Effect.gen(function*() {
        const result = yield* runToolLoop({ attempt: { ...attempt, provider: "novelai" }, apiKey: undefined })
        assert.strictEqual(result.passes.length, 2)
      })))

  it.effect("after pre-tool text, a pass of silent writes only ends the turn; one other call among them goes on", () =>
    Effect.gen(function*() {
      const silent = { endsTurnAfterText: true }
      const onlySilent = yield* withLoopHarness({
        tools: [ok("note_a", undefined, silent), ok("note_b", undefined, silent)],
        script: [callsWith([["note_a"], ["note_b"]], "Noted."), S.reply("never")]
      }, () => loop())
      assert.deepStrictEqual([onlySilent.status, onlySilent.text, onlySilent.passes.length], ["completed", "Noted.", 1])
      const mixed = yield* withLoopHarness({
        tools: [ok("note_a", undefined, silent), ok("lookup")],
        script: [callsWith([["note_a"], ["lookup"]], "Noted."), S.reply(" Found it.")]
      }, () => loop())
      assert.deepStrictEqual([mixed.status, mixed.passes.length], ["completed", 2])
    }))

  it.effect("short-term memory stays one-shot: a second update in the same pass is refused", () =>
    Effect.gen(function*() {
      const memory = yield* makeUpdateShortTermMemoryTool()
      yield* withLoopHarness({
        tools: [memory],
        script: [callsWith([[UPDATE_SHORT_TERM_MEMORY, { summary: "first" }], [UPDATE_SHORT_TERM_MEMORY, { summary: "second" }]]), S.reply("done")]
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.deepStrictEqual(result.toolCalls.map((call) => call.success), [true, false])
          assert.match(JSON.stringify(result.toolCalls[1]?.response), /already (ran|updated) this turn/)
        }))
    }).pipe(Effect.provide(memoryStores)))

  it.effect("the sticker: the latest successful pick in the model's order wins, a later miss does not clear it", () =>
    Effect.gen(function*() {
      const stickers: ReadonlyArray<Sticker> = [
        { id: "s1", name: "one" },
        { id: "s2", name: "two" }
      ]
      const picker = rawTool({
        name: "pick_sticker",
        sequential: true,
        turnEffect: "StickerSelected",
        execute: (args: ToolArgs) => {
          const chosen = stickers.find((sticker) => sticker.id === args["sticker_id"])
          return Effect.succeed(chosen === undefined ? toolFailure("no such sticker") : toolSuccess({ sticker_id: chosen.id }, { turnEffect: TurnEffect.StickerSelected({ sticker: chosen }) }))
        }
      })
      yield* withLoopHarness({
        tools: [picker],
        stickers,
        script: [
          callsWith([["pick_sticker", { sticker_id: "s2" }], ["pick_sticker", { sticker_id: "s1" }], ["pick_sticker", { sticker_id: "none" }]]),
          S.reply("done")
        ]
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.stickerSelection?.id, "s1")
        }))
    }))

  it.effect("deliberate mode gates each call: the exposed tool runs, the other is refused as blocked", () =>
    withLoopHarness({
      tools: [ok("allowed"), ok("hidden")],
      turn: { deliberate: { ...deliberateModeOff, active: true, allowedNames: ["allowed"] } },
      script: [calls("allowed", "hidden"), S.reply("done")]
    }, () =>
      Effect.gen(function*() {
        const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined })
        assert.deepStrictEqual(outcome.result.toolCalls.map((call) => [call.name, call.success]), [["allowed", true], ["hidden", false]])
        assert.deepInclude(resultOf(outcome.functionHistory, "hidden"), { status: "blocked_by_deliberate_tool_mode" })
      })))

  it.effect("a call with truncated arguments is refused on its own; the other call of the pass runs", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make<ReadonlyArray<string>>([])
      const recording = (name: string) => rawTool({ name, execute: () => Effect.as(Ref.update(ran, (all) => [...all, name]), toolSuccess()) })
      yield* withLoopHarness({
        tools: [recording("cut"), recording("whole")],
        script: [[S.toolCall("cut", { a: 1 }, { argumentsTruncated: true }), S.toolCall("whole", {}), S.finish("tool_calls")], S.reply("done")]
      }, () =>
        Effect.gen(function*() {
          const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined })
          assert.deepStrictEqual(yield* Ref.get(ran), ["whole"])
          assert.deepStrictEqual(outcome.result.toolCalls.map((call) => [call.name, call.success]), [["cut", false], ["whole", true]])
          assert.strictEqual(outcome.functionHistory[0]?.functionCall.args, undefined, "cut arguments are never replayed")
        }))
    }))

  it.effect("ToolActivity: Started and Finished for each call", () =>
    withLoopHarness({ tools: [ok("a"), failing("b")], script: [calls("a", "b"), S.reply("done")] }, ({ collected }) =>
      Effect.gen(function*() {
        yield* loop()
        const tools = (yield* collected.events).flatMap((event) => (event._tag === "Tool" ? [event.activity] : []))
        assert.deepStrictEqual(tools.filter((a) => a._tag === "Started"), [ToolActivity.Started({ name: "a", args: {} }), ToolActivity.Started({ name: "b", args: {} })])
        assert.deepStrictEqual(tools.filter((a) => a._tag === "Finished").map((a) => a._tag === "Finished" ? [a.name, a.success] : []), [["a", true], ["b", false]])
      })))

  it.effect("a malformed call among others fails the attempt before any call runs", () =>
    Effect.gen(function*() {
      const ran = yield* Ref.make(0)
      yield* withLoopHarness({
        tools: [rawTool({ name: "a", execute: () => Effect.as(Ref.update(ran, (n) => n + 1), toolSuccess()) })],
        script: [[S.toolCall("a"), S.toolCall("  "), S.finish("tool_calls")], S.reply("never")]
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "error")
          assert.strictEqual(yield* Ref.get(ran), 0)
        }))
    }))

  it.effect("a stop while the calls run aborts the pass: stopped_by_user, no result reaches the model", () =>
    withLoopHarness({ tools: [slow("a", "1 second"), slow("b", "2 seconds")], script: [calls("a", "b"), S.reply("never")] }, ({ signals }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runToolLoopDetailed({ attempt, apiKey: undefined }))
        yield* TestClock.adjust("500 millis")
        yield* signals.requestStop({ requesterId: "user-1" })
        yield* TestClock.adjust("2 seconds")
        const outcome = yield* Fiber.join(fiber)
        assert.strictEqual(outcome.result.status, "stopped_by_user")
        assert.deepStrictEqual(outcome.functionHistory, [])
        assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
      })))
})
