import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Exit, Fiber, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { makeCollectingSink } from "../../src/chat/CollectingSink"
import { LoopConfig } from "../../src/config/LoopConfig"
import { DeliveryError, ResponseSink } from "../../src/loop/ResponseSink"
import { makeTurnSignals, TurnSignals, type TurnSignalsShape } from "../../src/loop/TurnSignals"
import { UserNotice } from "../../src/loop/UserNotice"
import { PassResult } from "../../src/domain/PassResult"
import { streamOnce } from "../../src/loop/streamOnce"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { attempt, request, withPassHarness } from "./harness"

const run = (overrides: Parameters<typeof request>[0] = {}, info: Parameters<typeof attempt>[0] = {}) =>
  streamOnce({ request: request(overrides), attempt: attempt(info) })

describe("streamOnce (spec §4)", () => {
  it.effect("[4] forwards text deltas to the sink and completes with exactly what was delivered", () =>
    withPassHarness({ script: [[S.text("Hel"), S.text("lo"), S.usage(3, 2), S.finish()]] }, ({ collected }) =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.deepStrictEqual(pass, PassResult.Completed({ accumulatedText: "Hello", usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } }))
        assert.strictEqual(yield* collected.delivered, "Hello")
        const probe = yield* ScriptedProbe
        assert.strictEqual((yield* probe.calls)[0]?.ending, "completed")
      })))

  it.effect("[4] keeps reading after a tool call: every call is collected in order, text after a call is shown too", () =>
    withPassHarness({
      script: [[S.text("Let me "), S.text("check."), S.toolCall("web_search", { q: "x" }), S.text(" And"), S.toolCall("second"), S.finish("tool_calls")]],
      sink: { chunkSize: 1000 }
    }, ({ collected }) =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.strictEqual(pass._tag, "FunctionCall")
        if (pass._tag !== "FunctionCall") return
        assert.strictEqual(pass.accumulatedText, "Let me check. And")
        assert.deepStrictEqual(pass.calls, [{ name: "web_search", args: { q: "x" } }, { name: "second", args: undefined }])
        assert.strictEqual(yield* collected.delivered, "Let me check. And")
        const probe = yield* ScriptedProbe
        const call = (yield* probe.calls)[0]
        assert.strictEqual(call?.emitted, 6)
        assert.strictEqual(call?.ending, "completed")
      })))

  it.effect("[4b] a stream that never stops calling: collection stops at 4 × MAX_TOOL_CALLS_PER_PASS and the stream is closed", () =>
    withPassHarness({
      script: [Array.from({ length: 50 }, (_, i) => S.toolCall(`t${i}`))],
      config: { maxToolCallsPerPass: 3 }
    }, () =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.strictEqual(pass._tag, "FunctionCall")
        if (pass._tag !== "FunctionCall") return
        assert.deepStrictEqual(pass.calls.map((call) => call.name), Array.from({ length: 12 }, (_, i) => `t${i}`))
        const probe = yield* ScriptedProbe
        const call = (yield* probe.calls)[0]
        assert.strictEqual(call?.emitted, 12)
        assert.notStrictEqual(call?.ending, "completed")
      })))

  it.effect("[4] usage: the latest report of the pass wins", () =>
    withPassHarness({ script: [[S.usage(1, 1), S.text("a"), S.usage(10, 4)]] }, () =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.deepStrictEqual(pass.usage, { inputTokens: 10, outputTokens: 4, totalTokens: 14 })
      })))

  it.effect("[4] completed without text or call becomes empty_response carrying the finish reason", () =>
    withPassHarness({ script: [[S.usage(5, 0), S.finish("length")]] }, () =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.strictEqual(pass._tag, "EmptyResponse")
        if (pass._tag === "EmptyResponse") assert.strictEqual(pass.finishReason, "length")
      })))

  it.effect("[4] reasoning goes to the thought log, never to the sink", () =>
    withPassHarness({ script: [[S.reasoning("thinking..."), S.text("answer")]] }, ({ collected }) =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.deepStrictEqual(pass.thoughtLog, { raw: "thinking..." })
        assert.strictEqual(yield* collected.delivered, "answer")
      })))

  it.effect("[63] a provider error becomes an Error pass (the provider never throws to the loop); text already shown stays", () =>
    withPassHarness({ script: [[S.text("partial"), S.fail("Server", "upstream 502", { status: 502 })]] }, () =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.strictEqual(pass._tag, "Error")
        if (pass._tag !== "Error") return
        assert.strictEqual(pass.error.reason, "Server")
        assert.strictEqual(pass.accumulatedText, "partial")
      })))

  it.effect("[63] a defect in the provider stream is not converted: it propagates", () =>
    withPassHarness({ script: () => { throw new Error("bug in script") } }, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(run())
        assert.isTrue(exit._tag === "Failure")
      })))

  it.effect("[58] no content for the first-token budget ⇒ timeout(first_token) with the first-token notice; not a moment earlier", () =>
    withPassHarness({ script: [[S.keepAlive, S.sleep("200 seconds"), S.keepAlive, S.hang]] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("299 seconds")
        assert.isTrue(fiber.pollUnsafe() === undefined, "keep-alives do not end the first-token budget early")
        yield* TestClock.adjust("1 second")
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.Timeout({ accumulatedText: "", phase: "first_token", sawProgress: false }))
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.StreamTimeout({ provider: "scripted", phase: "first_token" })])
        const probe = yield* ScriptedProbe
        assert.strictEqual(yield* probe.awaitFinalized(0), "abandoned")
      })))

  it.effect("[58] the first-token budget follows LoopConfig.firstTokenTimeout", () =>
    withPassHarness({ script: [[S.hang]], config: { firstTokenTimeout: Duration.seconds(400) } }, () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("399 seconds")
        assert.isTrue(fiber.pollUnsafe() === undefined)
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Fiber.join(fiber))._tag, "Timeout")
      })))

  it.effect("[59] content then silence for the inactivity budget ⇒ timeout(idle)", () =>
    withPassHarness({ script: [[S.sleep("250 seconds"), S.text("Hi"), S.hang]] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("250 seconds")
        yield* TestClock.adjust("119 seconds")
        assert.isTrue(fiber.pollUnsafe() === undefined)
        yield* TestClock.adjust("1 second")
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.Timeout({ accumulatedText: "Hi", phase: "idle", sawProgress: true }))
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.StreamTimeout({ provider: "scripted", phase: "idle" })])
      })))

  it.effect("[59] first content brings the deadline earlier: one inactivity budget after it, to the millisecond", () =>
    withPassHarness({
      script: [[S.sleep("7 seconds"), S.text("Hi"), S.hang]],
      config: { streamInactivityTimeout: Duration.seconds(10) }
    }, () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("7 seconds")
        yield* TestClock.adjust(Duration.millis(9_999))
        assert.isTrue(fiber.pollUnsafe() === undefined, "not before 17 s")
        yield* TestClock.adjust(Duration.millis(1))
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.Timeout({ accumulatedText: "Hi", phase: "idle", sawProgress: true }))
      })))

  it.effect("[59] steady content never times out, however long the stream", () =>
    withPassHarness({
      script: [Array.from({ length: 20 }, (_, i) => [S.sleep("100 seconds"), S.text(`${i} `)]).flat()]
    }, () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("2000 seconds")
        const pass = yield* Fiber.join(fiber)
        assert.strictEqual(pass._tag, "Completed")
        assert.strictEqual(pass.accumulatedText.split(" ").length, 21)
      })))

  it.effect("[59] keep-alives do not re-arm the inactivity budget", () =>
    withPassHarness({
      script: [[S.text("a"), ...Array.from({ length: 10 }, () => [S.sleep("30 seconds"), S.keepAlive]).flat(), S.hang]]
    }, () =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("120 seconds")
        const pass = yield* Fiber.join(fiber)
        assert.strictEqual(pass._tag, "Timeout")
        if (pass._tag === "Timeout") assert.strictEqual(pass.phase, "idle")
      })))

  it.effect("[60] errors suppressed for the attempt ⇒ no notice; the pass carries phase and sawProgress for the outer tier", () =>
    withPassHarness({ script: [[S.text("x"), S.hang]] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run({}, { suppressUserErrors: true }))
        yield* TestClock.adjust("120 seconds")
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.Timeout({ accumulatedText: "x", phase: "idle", sawProgress: true }))
        assert.deepStrictEqual(yield* collected.notices, [])
      })))

  it.effect("[4] a Stalled provider error is handled as a timeout", () =>
    withPassHarness({ script: [[S.fail("Stalled")]] }, () =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.strictEqual(pass._tag, "Timeout")
        if (pass._tag === "Timeout") assert.strictEqual(pass.phase, "first_token")
      })))

  it.effect("[61] /kill during streaming ⇒ stopped_by_user at once (no settle wait), provider stream interrupted, text kept", () =>
    withPassHarness({ script: [[S.text("partial "), S.hang]], sink: { chunkSize: 1000 } }, ({ collected, signals }) =>
      Effect.gen(function*() {
        const probe = yield* ScriptedProbe
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("1 second")
        yield* signals.kill({ requesterId: "u1" })
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.StoppedByUser({ accumulatedText: "partial ", stopReason: "user_request" }))
        assert.strictEqual(yield* collected.delivered, "partial ", "a stop flushes the buffer")
        assert.strictEqual((yield* probe.calls)[0]?.ending, "interrupted", "the request was aborted, not left running")
      })))

  it.effect("[61] a stop already registered before the pass ends it without calling the provider", () =>
    withPassHarness({ script: [S.reply("never")] }, ({ signals }) =>
      Effect.gen(function*() {
        yield* signals.requestStop()
        const pass = yield* run()
        assert.strictEqual(pass._tag, "StoppedByUser")
        assert.deepStrictEqual(yield* (yield* ScriptedProbe).calls, [])
      })))

  it.effect("[61] a stop the watchdog meets when the budget runs out wins over the timeout: stopped_by_user at the deadline, no settle wait, no notice", () =>
    Effect.gen(function*() {
      const collected = yield* makeCollectingSink()
      const real = yield* makeTurnSignals("channel-1")
      // The request listener is blind here, so the deadline is first to see the stop: the race the timeout path settles.
      const signals: TurnSignalsShape = { ...real, onRequest: () => Effect.succeed(() => {}) }
      const fiber = yield* Effect.forkChild(streamOnce({ request: request(), attempt: attempt() }).pipe(
        Effect.provide(Layer.mergeAll(
          Scripted.layer({ script: [[S.text("partial "), S.hang]] }),
          Layer.succeed(ResponseSink, collected.sink),
          Layer.succeed(TurnSignals, signals),
          LoopConfig.make({ streamInactivityTimeout: Duration.seconds(10) })
        ))
      ))
      yield* TestClock.adjust("5 seconds")
      yield* real.requestStop({ requesterId: "u1" })
      yield* TestClock.adjust(Duration.millis(4_999))
      assert.isTrue(fiber.pollUnsafe() === undefined, "nothing decides before the deadline")
      yield* TestClock.adjust(Duration.millis(1))
      const pass = Option.getOrThrow(Option.fromNullishOr(fiber.pollUnsafe()))
      assert.deepStrictEqual(pass, Exit.succeed(PassResult.StoppedByUser({ accumulatedText: "partial ", stopReason: "user_request" })))
      assert.deepStrictEqual(yield* collected.notices, [], "no timeout notice")
    }))

  it.effect("[issue 11.8] a sink write that takes three inactivity budgets is not a provider stall: the pass completes", () =>
    withPassHarness({
      script: [[S.text("Hello"), S.sleep("9 seconds"), S.text(" world"), S.finish("stop")]],
      sink: { deliveryDelay: "30 seconds" },
      config: { streamInactivityTimeout: Duration.seconds(10) }
    }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust(Duration.millis(68_999))
        assert.isTrue(fiber.pollUnsafe() === undefined, "two 30 s writes and 9 s of provider time")
        yield* TestClock.adjust(Duration.millis(1))
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.Completed({ accumulatedText: "Hello world" }))
        assert.strictEqual(yield* collected.delivered, "Hello world")
        assert.deepStrictEqual(yield* collected.notices, [], "no timeout notice")
      })))

  it.effect("[62][issue 11.8] the budget restarts when a slow delivery ends: the provider's own silence still times out, text and usage kept", () =>
    withPassHarness({
      script: [[S.usage(7, 3), S.text("Hello"), S.hang]],
      sink: { deliveryDelay: "14 seconds" },
      config: { streamInactivityTimeout: Duration.seconds(10) }
    }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust(Duration.millis(23_999))
        assert.isTrue(fiber.pollUnsafe() === undefined, "14 s of delivery do not count")
        yield* TestClock.adjust(Duration.millis(1))
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.Timeout({
          accumulatedText: "Hello",
          usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 },
          phase: "idle",
          sawProgress: true
        }))
        assert.strictEqual(yield* collected.delivered, "Hello")
      })))

  it.effect("[53] a follow-up request interrupts the pass and discards the buffered text", () =>
    withPassHarness({ script: [[S.text("12345"), S.text("678"), S.hang]], sink: { chunkSize: 5 } }, ({ collected, signals }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(run())
        yield* TestClock.adjust("1 second")
        yield* signals.requestFollowUp
        const pass = yield* Fiber.join(fiber)
        assert.deepStrictEqual(pass, PassResult.FollowUpInterrupt({ accumulatedText: "12345" }))
        assert.strictEqual(yield* collected.delivered, "12345")
        const ended = (yield* collected.events).find((event) => event._tag === "PassEnded")
        assert.deepStrictEqual(ended, { _tag: "PassEnded", mode: "discard", text: "12345", discarded: "678" })
        assert.strictEqual((yield* (yield* ScriptedProbe).calls)[0]?.ending, "interrupted")
      })))

  it.effect("[70][decision 18] a destination that refuses the reply ends the pass as DeliveryFailed with its stop reason", () =>
    withPassHarness({
      script: [[S.text("a"), S.text("b"), S.hang]],
      sink: { failFrom: { delivery: 1, error: new DeliveryError({ reason: "missing_access", detail: "403" }) } }
    }, () =>
      Effect.gen(function*() {
        const pass = yield* run()
        assert.deepStrictEqual(pass, PassResult.DeliveryFailed({
          accumulatedText: "a",
          stopReason: "missing_access",
          error: new DeliveryError({ reason: "missing_access", detail: "403" })
        }))
        assert.strictEqual((yield* (yield* ScriptedProbe).calls)[0]?.ending, "abandoned", "the request is closed")
      })))

  it.effect("[decision 4] a continuation that repeats its prefill has the repeat dropped", () =>
    withPassHarness({ script: [[S.text("The capital of France"), S.text(" is Paris, and it is big.")]] }, ({ collected }) =>
      Effect.gen(function*() {
        const pass = yield* run({ assistantPrefill: "The capital of France is Paris" })
        assert.strictEqual(pass.accumulatedText, ", and it is big.")
        assert.strictEqual(yield* collected.delivered, ", and it is big.")
      })))

  it.effect("[decision 4] a genuine continuation is delivered untouched", () =>
    withPassHarness({ script: [[S.text(" is Paris"), S.text(".")]] }, ({ collected }) =>
      Effect.gen(function*() {
        yield* run({ assistantPrefill: "The capital of France" })
        assert.strictEqual(yield* collected.delivered, " is Paris.")
      })))
})
