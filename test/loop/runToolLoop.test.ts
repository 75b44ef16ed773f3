import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import type { FunctionCall } from "../../src/domain/FunctionCall"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { ToolActivity } from "../../src/loop/ToolActivity"
import { UserNotice } from "../../src/loop/UserNotice"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { resultText } from "../../src/loop/buildResult"
import { runToolLoop, runToolLoopDetailed } from "../../src/loop/runToolLoop"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { constantTool, echoTool, makeHangingTool, makeRecordingTool, stickerPickTool } from "../support/tools/testTools"
import { testAttempt } from "../support/tools/toolCallHarness"
import { withLoopHarness } from "./harness"

const attempt = { ...testAttempt, provider: "scripted" }
const loop = (extra: Partial<Parameters<typeof runToolLoop>[0]> = {}) => runToolLoop({ attempt, apiKey: undefined, ...extra })

const failing = (name: string) => constantTool(name, toolFailure(`${name} failed`))
const ok = (name: string, data?: unknown, overrides: Parameters<typeof constantTool>[2] = {}) =>
  constantTool(name, toolSuccess(data), overrides)

describe("runToolLoop (spec §2)", () => {
  it.effect("[1] one completed pass: status completed, the text, one pass, no tool calls", () =>
    withLoopHarness({ script: [S.reply("hi")] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.text, "hi")
        assert.strictEqual(result.passes.length, 1)
        assert.deepStrictEqual(result.toolCalls, [])
      })))

  it.effect("[2] a tool call is executed once and replayed to the next pass; the final text is the last pass's", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("echo_tool", (args) => Effect.succeed(toolSuccess({ echoed: args["text"] })))
      yield* withLoopHarness({
        tools: [recorder.tool],
        script: [S.callTool("echo_tool", { text: "hello" }), S.reply("I echoed: hello")]
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "I echoed: hello")
          assert.strictEqual(result.passes.length, 2)
          const calls = yield* Ref.get(recorder.calls)
          assert.deepStrictEqual(calls.map((call) => call.args), [{ text: "hello" }])
          const requests = yield* (yield* ScriptedProbe).requests
          assert.strictEqual(requests[0]?.functionHistory.length, 0)
          assert.strictEqual(requests[1]?.functionHistory.length, 1)
          assert.deepStrictEqual(requests[1]?.functionHistory[0]?.functionResponse.response.result, { echoed: "hello" })
          assert.strictEqual(result.toolCalls.length, 1)
          const record = result.toolCalls[0]
          assert.strictEqual(record?.name, "echo_tool")
          assert.deepStrictEqual(record?.args, { text: "hello" })
          assert.strictEqual(record?.success, true)
          assert.deepStrictEqual(record?.response, { echoed: "hello" }, "the exact replayed payload")
          const tools = (yield* collected.events).flatMap((event) => (event._tag === "Tool" ? [event.activity] : []))
          assert.deepStrictEqual(tools[0], ToolActivity.Started({ name: "echo_tool", args: { text: "hello" } }))
          assert.strictEqual(tools[1]?._tag, "Finished")
        }))
    }))

  it.effect("[2] declared tools come from the registry for this provider and turn", () =>
    withLoopHarness({ tools: [echoTool], script: [S.reply("x")] }, () =>
      Effect.gen(function*() {
        yield* loop()
        const requests = yield* (yield* ScriptedProbe).requests
        assert.deepStrictEqual(requests[0]?.tools.map((tool) => tool.name), ["echo_tool"])
        assert.strictEqual(requests[0]?.system, "You are a test bot.")
      })))

  it.effect("[7] 20 consecutive failing calls: exactly 5 executions, status error, no text, the tool-error notice", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("flaky", () => Effect.succeed(toolFailure("nope")))
      yield* withLoopHarness({
        tools: [recorder.tool],
        script: Array.from({ length: 20 }, () => S.callTool("flaky"))
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "error")
          assert.strictEqual(result.text, "")
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 5)
          assert.strictEqual(result.passes.length, 5)
          assert.deepStrictEqual(yield* collected.notices, [UserNotice.ToolErrorLoop({ failures: 5, lastTool: "flaky" })])
        }))
    }))

  it.effect("[7] not surfaced: the tool-error loop only logs", () =>
    withLoopHarness({
      tools: [failing("flaky")],
      turn: { shouldSurfaceUserErrors: false },
      script: Array.from({ length: 20 }, () => S.callTool("flaky"))
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "error")
        assert.deepStrictEqual(yield* collected.notices, [])
      })))

  it.effect("[7] under user impersonation the tool-error loop aborts the turn with an error", () =>
    withLoopHarness({
      tools: [failing("flaky")],
      turn: { isUserImpersonation: true },
      script: Array.from({ length: 20 }, () => S.callTool("flaky"))
    }, ({ collected }) =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(loop())
        assert.isTrue(Exit.isFailure(exit))
        assert.deepStrictEqual(yield* collected.notices, [])
      })))

  it.effect("[8] fail, fail, success, then failures: status error after the 8th call (the success reset the counter)", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("mixed", (_, n) => Effect.succeed(n === 2 ? toolSuccess() : toolFailure("bad")))
      yield* withLoopHarness({ tools: [recorder.tool], script: Array.from({ length: 20 }, () => S.callTool("mixed")) }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "error")
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 8)
        }))
    }))

  it.effect("[9] a context restart resets the error counter: 4 failures, restart, 4 failures, then completed", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("mixed", (_, n) =>
        Effect.succeed(
          n === 4
            ? toolSuccess({ type: "context_restart_youtube", enhanced_context_item: { role: "system", content: "transcript" } })
            : toolFailure("bad")
        ))
      yield* withLoopHarness({
        tools: [recorder.tool],
        script: [...Array.from({ length: 9 }, () => S.callTool("mixed")), S.reply("done")]
      }, ({ tools }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "done")
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 9)
          const restart = result.toolCalls[4]
          assert.deepStrictEqual([restart?.success, restart?.response], [true, null])
          assert.isTrue((yield* Ref.get(tools.state.flags)).disableYouTubeProcessing)
          const items = yield* Ref.get(tools.state.contextItems)
          assert.strictEqual(items[items.length - 1]?.content, "transcript")
        }))
    }))

  it.effect("[10] a model that always calls a tool: exactly 100 executions and passes, status timeout, the max-iterations notice", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("again")
      yield* withLoopHarness({ tools: [recorder.tool], script: () => S.callTool("again") }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual(result.status, "timeout")
          assert.strictEqual(result.text, "")
          assert.strictEqual(result.passes.length, 100)
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 100)
          const notices = yield* collected.notices
          assert.deepStrictEqual(notices, [UserNotice.StillWorking({ iteration: 20 }), UserNotice.MaxIterations({ iterations: 100 })])
        }))
    }))

  it.effect("[10][5.2] the iteration cap follows LoopConfig.maxIterations", () =>
    withLoopHarness({ tools: [ok("again")], loop: { maxIterations: 3 }, script: () => S.callTool("again") }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "timeout")
        assert.strictEqual(result.passes.length, 3)
      })))

  it.effect("[11] 21 iterations, surfaced: exactly one still-working notice, before pass 21", () =>
    withLoopHarness({
      tools: [ok("step")],
      script: [...Array.from({ length: 20 }, () => S.callTool("step")), S.reply("finally")]
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.passes.length, 21)
        const events = yield* collected.events
        const noticeAt = events.findIndex((event) => event._tag === "Notice")
        assert.deepStrictEqual(events.filter((event) => event._tag === "Notice").length, 1)
        assert.strictEqual(events.slice(0, noticeAt).filter((event) => event._tag === "PassEnded").length, 20)
      })))

  it.effect("[11] 21 iterations, not surfaced: no still-working notice", () =>
    withLoopHarness({
      tools: [ok("step")],
      turn: { shouldSurfaceUserErrors: false },
      script: [...Array.from({ length: 20 }, () => S.callTool("step")), S.reply("finally")]
    }, ({ collected }) =>
      Effect.gen(function*() {
        yield* loop()
        assert.deepStrictEqual(yield* collected.notices, [])
      })))

  it.effect("[29] endTurn after pre-tool text \"Done!\": completed with that text, no further pass", () =>
    withLoopHarness({ tools: [constantTool("finish_it", toolSuccess(undefined, { endTurn: true }))], script: [S.callTool("finish_it", {}, "Done!"), S.reply("never")] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Done!", 1])
      })))

  it.effect("[30] endTurn + responseDelivered without text: completed, no text, toolResponseDelivered", () =>
    withLoopHarness({
      tools: [constantTool("voice", toolSuccess(undefined, { endTurn: true, responseDelivered: true }))],
      script: [S.callTool("voice")]
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.toolResponseDelivered], ["completed", "", true])
      })))

  it.effect("[31] STM success after pre-tool text \"Got it\": completed after one pass, requiresFollowUp never consulted", () =>
    withLoopHarness({ tools: [ok("update_short_term_memory", undefined, { endsTurnAfterText: true })], script: [S.callTool("update_short_term_memory", {}, "Got it"), S.reply("never")] }, ({ followUpLookups }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Got it", 1])
        assert.deepStrictEqual(yield* followUpLookups, [])
      })))

  it.effect("[32] STM success without pre-tool text: the loop continues and further STM updates are disabled", () =>
    withLoopHarness({ tools: [ok("update_short_term_memory", undefined, { oncePerTurn: true })], script: [S.callTool("update_short_term_memory"), S.reply("ok")] }, ({ tools }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.passes.length], ["completed", 2])
        assert.deepStrictEqual((yield* Ref.get(tools.state.flags)).spentOncePerTurnTools, ["update_short_term_memory"])
      })))

  it.effect("[33] another memory tool after pre-tool text: the loop continues (2 passes)", () =>
    withLoopHarness({ tools: [ok("create_long_term_memory")], script: [S.callTool("create_long_term_memory", {}, "Saving."), S.reply("Saved! Anything else?")] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Saved! Anything else?", 2])
      })))

  it.effect("[38] pre-tool text \"Here\", a tool that needs no follow-up, then an empty pass: completed with \"Here\"", () =>
    withLoopHarness({ tools: [ok("react")], script: [S.callTool("react", {}, "Here"), [S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text], ["completed", "Here"])
      })))

  it.effect("[39] same, but the tool requires a follow-up: empty_response", () =>
    withLoopHarness({ tools: [ok("fetch_url", { page: "x" }, { requiresFollowUp: true })], script: [S.callTool("fetch_url", {}, "Here"), [S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual([result.status, result.text], ["empty_response", ""])
      })))

  it.effect("[40] an empty follow-up cut by length never settles", () =>
    withLoopHarness({ tools: [ok("react")], script: [S.callTool("react", {}, "Here"), [S.finish("length")]] }, () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* loop()).status, "empty_response")
      })))

  it.effect("[42] no visible text and no delivered tool response: empty_response even after a non-follow-up tool", () =>
    withLoopHarness({ tools: [ok("react")], script: [S.callTool("react"), [S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* loop()).status, "empty_response")
      })))

  it.effect("[43] a response delivered by an earlier attempt lets an empty follow-up after a non-follow-up tool settle", () =>
    withLoopHarness({ tools: [ok("react")], script: [S.callTool("react"), [S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop({ toolResponseDelivered: true })
        assert.deepStrictEqual([result.status, result.toolResponseDelivered], ["completed", true])
      })))

  it.effect("[48][50][51] pre-tool text lives on its history entry and is never sent again as the start of the answer", () =>
    withLoopHarness({
      tools: [ok("first"), ok("second")],
      script: [S.callTool("first", {}, "Let me check."), S.callTool("second", {}, "One more."), S.reply("All done.")]
    }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.text, "All done.")
        const requests = yield* (yield* ScriptedProbe).requests
        assert.strictEqual(requests[1]?.assistantPrefill, undefined)
        assert.strictEqual(requests[2]?.assistantPrefill, undefined)
        assert.deepStrictEqual(requests[2]?.functionHistory.map((entry) => entry.preToolCallTextParts), [
          [{ type: "text", text: "Let me check." }],
          [{ type: "text", text: "One more." }]
        ])
      })))

  it.effect("[2.6] pre-tool text before a context restart is on no entry, so it stays the start of the next answer", () =>
    withLoopHarness({
      tools: [ok("watch", { type: "context_restart_youtube", enhanced_context_item: { role: "system", content: "video" } })],
      script: [S.callTool("watch", {}, "Watching the video now."), S.reply(" It is about cats.")]
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        const requests = yield* (yield* ScriptedProbe).requests
        assert.strictEqual(requests[1]?.assistantPrefill, "Watching the video now.")
        assert.deepStrictEqual(requests[1]?.functionHistory, [])
        assert.strictEqual(result.text, "Watching the video now. It is about cats.")
        assert.strictEqual(yield* collected.delivered, "Watching the video now. It is about cats.")
      })))

  it.effect("[52] stopped_by_user keeps the partial text and queues the stop response when a stop context exists", () =>
    withLoopHarness({ script: [[S.text("partial"), S.hang]] }, ({ signals, stopResponses }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(loop())
        yield* TestClock.adjust("1 second")
        yield* signals.kill({ requesterId: "u1", stopContext: { requesterId: "u1", originalMessageId: "m9" } })
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual([result.status, result.text], ["stopped_by_user", "partial"])
        assert.deepStrictEqual(yield* stopResponses, [{ requesterId: "u1", originalMessageId: "m9" }])
      })))

  it.effect("[52] without a stop context the stop request is cleared (it must not abort the next turn)", () =>
    withLoopHarness({ script: [[S.text("partial"), S.hang]] }, ({ signals, stopResponses }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(loop())
        yield* TestClock.adjust("1 second")
        yield* signals.requestStop({ requesterId: "u1" })
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(result.status, "stopped_by_user")
        assert.deepStrictEqual(yield* stopResponses, [])
        assert.strictEqual((yield* signals.current)._tag, "None")
      })))

  it.effect("[kill during a tool] /kill while a tool runs: stopped_by_user, the tool fiber interrupted, nothing replayed", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("slow")
      yield* withLoopHarness({ tools: [hanging.tool], script: [S.callTool("slow", {}, "Working on it."), S.reply("never")] }, ({ signals, collected }) =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(loop())
          yield* Deferred.await(hanging.started)
          yield* signals.kill({ requesterId: "u1" })
          const result = yield* Fiber.join(fiber)
          assert.strictEqual(result.status, "stopped_by_user")
          assert.strictEqual(result.text, "Working on it.")
          assert.deepStrictEqual(result.toolCalls, [])
          yield* hanging.whenFinalized
          assert.isTrue(yield* Ref.get(hanging.finalized), "the losing tool fiber was interrupted")
          assert.isTrue((yield* Ref.get(hanging.signal))?.aborted, "its AbortSignal fired")
          assert.strictEqual((yield* (yield* ScriptedProbe).calls).length, 1, "no pass after the kill")
          const tools = (yield* collected.events).flatMap((event) => (event._tag === "Tool" ? [event.activity._tag] : []))
          assert.deepStrictEqual(tools, ["Started", "Aborted"])
        }))
    }))

  it.effect("[53] follow_up_interrupt ends the attempt with that status", () =>
    withLoopHarness({ script: [[S.text("abc"), S.hang]] }, ({ signals }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(loop())
        yield* TestClock.adjust("1 second")
        yield* signals.requestFollowUp
        assert.strictEqual((yield* Fiber.join(fiber)).status, "follow_up_interrupt")
      })))

  it.effect("[54] a provider error ends the attempt at once with error and no tool-error notice", () =>
    withLoopHarness({ script: [[S.fail("Server")], S.reply("never")] }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.strictEqual(result.status, "error")
        assert.strictEqual(result.passes.length, 1)
        assert.deepStrictEqual(yield* collected.notices, [])
      })))

  it.effect("[13][14] a malformed call (no payload, no name, blank name) aborts with error and nothing runs", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("x")
      // What a broken provider can emit: a call event whose payload lacks a name.
      const nameless = S.ScriptStep.Emit({ event: ProviderEvent.ToolCall({ call: {} as FunctionCall }) })
      const noPayload = S.ScriptStep.Emit({ event: ProviderEvent.ToolCall({ call: undefined as unknown as FunctionCall }) })
      for (const step of [nameless, noPayload, S.toolCall("   ")]) {
        yield* withLoopHarness({ tools: [recorder.tool], script: [[step, S.finish("tool_calls")], S.reply("never")] }, () =>
          Effect.gen(function*() {
            const result = yield* loop()
            assert.deepStrictEqual([result.status, result.toolCalls.length, result.passes.length], ["error", 0, 1])
            assert.strictEqual(result.passes[0]?._tag, "FunctionCall")
          }))
      }
      assert.strictEqual((yield* Ref.get(recorder.calls)).length, 0)
    }))

  it.effect("[28] 10 consecutive truncated calls: the turn ends with error after the 5th, nothing executed", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("update_short_term_memory")
      yield* withLoopHarness({
        tools: [recorder.tool],
        script: Array.from({ length: 10 }, () => [S.toolCall("update_short_term_memory", { scene_state: "bed" }, { argumentsTruncated: true }), S.finish("tool_calls")])
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.deepStrictEqual([result.status, result.passes.length, result.toolCalls.length], ["error", 5, 5])
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 0)
          assert.isTrue(result.toolCalls.every((call) => call.args === undefined && !call.success))
          assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["ToolErrorLoop"])
        }))
    }))

  it("[55][56] scene metadata: appended after the text; details alone are trimmed (the quirk is not kept)", () => {
    assert.strictEqual(resultText("hi", "scene"), "hi\n\n[Scene Metadata]\nscene")
    assert.strictEqual(resultText("", "scene"), "[Scene Metadata]\nscene")
    assert.strictEqual(resultText("  hi  ", "   "), "hi")
  })

  it.effect("[57] the thought log of pass 1 is the result's thought log", () =>
    withLoopHarness({ tools: [ok("step")], script: [[S.reasoning("plan"), S.toolCall("step")], S.reply("ok")] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual(result.thoughtLog, { raw: "plan" })
      })))

  it.effect("[usage] attempt usage is the sum of its passes", () =>
    withLoopHarness({ tools: [ok("step")], script: [[S.usage(10, 2), S.toolCall("step")], [S.text("x"), S.usage(20, 3)]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop()
        assert.deepStrictEqual(result.usage, { inputTokens: 30, outputTokens: 5, totalTokens: 35 })
      })))

  it.effect("[decision 4] a continuation attempt is given the delivered text as prefill and completes it", () =>
    withLoopHarness({ script: [S.reply("ld, how are you?")] }, ({ collected }) =>
      Effect.gen(function*() {
        const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined, prefill: "Hello wor" })
        const requests = yield* (yield* ScriptedProbe).requests
        assert.strictEqual(requests[0]?.assistantPrefill, "Hello wor")
        assert.strictEqual(outcome.result.text, "Hello world, how are you?")
        assert.strictEqual(yield* collected.delivered, "ld, how are you?")
      })))

  it.effect("[decision 4] a continuation with nothing to add completes the reply it continued", () =>
    withLoopHarness({ script: [[S.finish("stop")]] }, () =>
      Effect.gen(function*() {
        const result = yield* loop({ prefill: "The whole answer." })
        assert.deepStrictEqual([result.status, result.text], ["completed", "The whole answer."])
      })))

  it.effect("[decision 4] a failed attempt reports the text after its last tool call as the continuation point", () =>
    withLoopHarness({ tools: [ok("step")], script: [S.callTool("step", {}, "First."), [S.text(" Second"), S.fail("Server")]] }, () =>
      Effect.gen(function*() {
        const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined })
        assert.strictEqual(outcome.result.status, "error")
        assert.strictEqual(outcome.unansweredText, " Second")
        assert.strictEqual(outcome.functionHistory.length, 1)
      })))

  it.effect("[19 via loop] a tool timeout is a failed entry and the loop goes on", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("stuck")
      yield* withLoopHarness({
        tools: [hanging.tool],
        loop: { toolExecutionTimeout: Duration.seconds(10) },
        script: [S.callTool("stuck"), S.reply("moving on")]
      }, () =>
        Effect.gen(function*() {
          const fiber = yield* Effect.forkChild(loop())
          yield* TestClock.adjust("10 seconds")
          const result = yield* Fiber.join(fiber)
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.toolCalls[0]?.success, false)
          assert.deepStrictEqual(result.toolCalls[0]?.response, {
            status: "tool_execution_failed",
            reason: "Tool \"stuck\" timed out after 10s.",
            tool_name: "stuck"
          })
        }))
    }))

  it.effect("[decision 15] a stop response declares no tools, refuses a call without dispatch, and gets one pass", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("fetch_page", () => Effect.succeed(toolSuccess("page")))
      yield* withLoopHarness({
        tools: [recorder.tool],
        turn: { isStopResponse: true },
        // The model of issue 11: it calls the killed tool again, then would go on talking.
        script: [S.callTool("fetch_page", {}, "Stopped. "), S.reply("and here is more")]
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          const requests = yield* (yield* ScriptedProbe).requests
          assert.deepStrictEqual(requests.map((request) => request.tools.map((tool) => tool.name)), [[]], "one pass, no tools declared")
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 0, "the call was never dispatched")
          assert.deepStrictEqual([result.status, result.text, result.passes.length], ["completed", "Stopped.", 1])
          assert.strictEqual(result.toolCalls[0]?.success, false)
          assert.include((result.toolCalls[0]?.response as { reason: string }).reason, "only acknowledges")
        }))
    }))

  it.effect("[decision 15] a stop response that only emits a call ends empty, with nothing run", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("fetch_page", () => Effect.succeed(toolSuccess("page")))
      yield* withLoopHarness({ tools: [recorder.tool], turn: { isStopResponse: true }, script: [S.callTool("fetch_page")] }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.deepStrictEqual([result.status, result.passes.length], ["empty_response", 1])
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 0)
        }))
    }))

  it.effect("[issue 11.5] deliberate mode with no trigger refuses a call the model emits anyway, with the block result", () =>
    Effect.gen(function*() {
      const recorder = yield* makeRecordingTool("search_tool", () => Effect.succeed(toolSuccess("found")))
      yield* withLoopHarness({
        tools: [recorder.tool],
        turn: { deliberate: { active: true, allowedNames: [], triggerMatchByToolName: new Map(), contextTurns: 2, disableAllTools: true } },
        script: [S.callTool("search_tool", { q: "x" }), S.reply("ok")]
      }, () =>
        Effect.gen(function*() {
          const result = yield* loop()
          assert.strictEqual((yield* Ref.get(recorder.calls)).length, 0, "never dispatched")
          assert.strictEqual(result.status, "completed")
          assert.deepStrictEqual(result.toolCalls[0]?.response, {
            status: "blocked_by_deliberate_tool_mode",
            functionName: "search_tool",
            allowedToolNames: [],
            reason: "Tool \"search_tool\" was not exposed for this deliberate tool mode turn."
          })
        }))
    }))

  it.effect("[issue 11.4] an attempt's result carries the chosen sticker only when it completed", () =>
    withLoopHarness({
      tools: [stickerPickTool({ id: "111", name: "wave" }), failing("broken")],
      stickers: [{ id: "111", name: "wave" }],
      script: [S.callTool("select_sticker_for_response"), ...Array.from({ length: 5 }, () => S.callTool("broken"))]
    }, () =>
      Effect.gen(function*() {
        const outcome = yield* runToolLoopDetailed({ attempt, apiKey: undefined })
        assert.strictEqual(outcome.result.status, "error")
        assert.strictEqual(outcome.result.stickerSelection, undefined)
        assert.strictEqual(outcome.stickerSelection?.id, "111", "the pick itself is kept for a replacement attempt")
      })))

  it.effect("deliberate tool mode declares only the allowed tools; with no intent it declares none", () =>
    Effect.gen(function*() {
      const declared = (allowedNames: ReadonlyArray<string>, disableAllTools?: boolean) =>
        withLoopHarness({
          tools: [ok("search_tool"), ok("memory_tool")],
          turn: {
            deliberate: {
              active: true,
              allowedNames,
              triggerMatchByToolName: new Map(),
              contextTurns: 2,
              ...(disableAllTools === undefined ? {} : { disableAllTools })
            }
          },
          script: [S.reply("ok")]
        }, () =>
          Effect.gen(function*() {
            yield* loop()
            const requests = yield* (yield* ScriptedProbe).requests
            return requests[0]?.tools.map((tool) => tool.name)
          }))
      assert.deepStrictEqual(yield* declared(["search_tool"]), ["search_tool"])
      assert.deepStrictEqual(yield* declared([], true), [])
    }))
})
