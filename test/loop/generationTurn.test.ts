import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Layer, Option, Redacted, Ref, References } from "effect"
import { TestClock } from "effect/testing"
import { DeliveryError, ResponseSink } from "../../src/loop/ResponseSink"
import { UserNotice } from "../../src/loop/UserNotice"
import type { FunctionCall } from "../../src/domain/FunctionCall"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { toolFailure, toolSuccess } from "../../src/domain/ToolResult"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import * as S from "../../src/provider/scripted/Script"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import { constantTool, makeRecordingTool, stickerPickTool } from "../support/tools/testTools"
import { type LoopHarness, withLoopHarness } from "./harness"

const keyOf = (request: GenerationRequest) => (request.apiKey === undefined ? "none" : Redacted.value(request.apiKey))

/** Runs `body` with the loop harness plus a route plan and a fresh key pool. */
const withTurn = <A, E, R>(
  options: Parameters<typeof withLoopHarness>[0] & { readonly models: ReadonlyArray<string>; readonly keys?: ReadonlyArray<string> },
  body: (harness: LoopHarness) => Effect.Effect<A, E, R>
) =>
  withLoopHarness(options, (harness) =>
    body(harness).pipe(Effect.provide(Layer.merge(RoutePlan.make(options.models, options.keys ?? []), KeyPool.Default))))

const rateLimited = S.fail("RateLimit", "429 Too Many Requests: rate_limit_exceeded", { status: 429 })

describe("runGenerationTurn (spec §5, design decision 4)", () => {
  it.effect("[65] primary rate-limited, fallback answers: the fallback's result, one fallback notice, no error notice", () =>
    Effect.gen(function*() {
      const probe = yield* makeRecordingTool("probe", () => Effect.succeed(toolSuccess()))
      yield* withTurn({
        models: ["primary", "fallback"],
        tools: [probe.tool],
        script: ({ request, index }) =>
          index % 2 === 0 ? S.callTool("probe") : request.model === "primary" ? [rateLimited] : S.reply("from the fallback")
      }, ({ collected, tools }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn().pipe(Effect.provideService(References.MinimumLogLevel, "Debug"))
          // Errors are suppressed while another model is pending, and surfaced on the last one.
          const started = yield* tools.logs.matching("generation attempt starts")
          assert.deepStrictEqual(started.map((line) => [line.annotations["model"], line.annotations["suppressUserErrors"]]), [
            ["primary", true],
            ["fallback", false]
          ])
          assert.strictEqual(result.status, "completed")
          assert.strictEqual(result.text, "from the fallback")
          assert.deepStrictEqual(result.attempts, [
            { model: "primary", keyIndex: 0, status: "error" },
            { model: "fallback", keyIndex: 0, status: "completed" }
          ])
          assert.strictEqual((yield* Ref.get(probe.calls)).length, 2)
          const notices = yield* collected.notices
          assert.strictEqual(notices.length, 1)
          const notice = notices[0]
          assert.strictEqual(notice?._tag, "FallbackUsed")
          if (notice?._tag !== "FallbackUsed") return
          assert.strictEqual(notice.model, "fallback")
          assert.strictEqual(notice.failures[0]?.model, "primary")
          assert.strictEqual(notice.failures[0]?.reason, "rate_limited")
          assert.strictEqual(result.iterations, 4)
          assert.strictEqual(result.toolCalls.length, 2)
        }))
    }))

  it.effect("[66] primary timeout: no key rotation, the fallback answers", () =>
    withTurn({
      models: ["primary", "fallback"],
      keys: ["k0", "k1", "k2"],
      script: ({ request }) => (request.model === "primary" ? [S.hang] : S.reply("late but fine"))
    }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runGenerationTurn())
        yield* TestClock.adjust("300 seconds")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual(result.attempts, [
          { model: "primary", keyIndex: 0, status: "timeout" },
          { model: "fallback", keyIndex: 0, status: "completed" }
        ])
        assert.strictEqual(result.text, "late but fine")
        const notices = yield* collected.notices
        assert.deepStrictEqual(notices.map((notice) => notice._tag), ["FallbackUsed"], "the suppressed timeout notice is not resent after an answer")
        assert.strictEqual((yield* (yield* KeyPool).snapshot).size, 0, "a timeout rests no key")
      })))

  it.effect("[67] a provider error rotates keys on the same model (≤ 3), rate limits rest a key for 60 s", () =>
    withTurn({
      models: ["only"],
      keys: ["k0", "k1", "k2", "k3"],
      script: ({ request }) => (keyOf(request) === "k2" ? S.reply("third key worked") : [rateLimited])
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.deepStrictEqual(result.attempts, [
          { model: "only", keyIndex: 0, status: "error" },
          { model: "only", keyIndex: 1, status: "error" },
          { model: "only", keyIndex: 2, status: "completed" }
        ])
        const requests = yield* (yield* ScriptedProbe).requests
        assert.deepStrictEqual(requests.map(keyOf), ["k0", "k1", "k2"])
        const resting = yield* (yield* KeyPool).snapshot
        assert.deepStrictEqual([...resting.entries()], [[0, 60_000], [1, 60_000]])
      })))

  it.effect("[67] at most 3 keys per model, then the next model", () =>
    withTurn({
      models: ["m1", "m2"],
      keys: ["k0", "k1", "k2", "k3"],
      script: ({ request }) => (request.model === "m1" ? [rateLimited] : S.reply("m2 answers"))
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.deepStrictEqual(result.attempts.map((a) => `${a.model}#${a.keyIndex}:${a.status}`), [
          "m1#0:error",
          "m1#1:error",
          "m1#2:error",
          "m2#3:completed"
        ], "m2 starts with the only key that is not resting")
      })))

  it.effect("[67] key cooldowns are shared across turns and expire on the Clock (60 s rate limit, 5 min other errors)", () =>
    withTurn({
      models: ["only"],
      keys: ["k0", "k1", "k2"],
      script: ({ request, index }) =>
        index === 0 ? [rateLimited] : index === 1 ? [S.fail("Auth", "401 invalid key", { status: 401 })] : S.reply(`answered with ${keyOf(request)}`)
    }, () =>
      Effect.gen(function*() {
        const first = yield* runGenerationTurn()
        assert.deepStrictEqual(first.attempts.map((a) => a.keyIndex), [0, 1, 2])
        const second = yield* runGenerationTurn()
        assert.deepStrictEqual(second.attempts.map((a) => a.keyIndex), [2], "k0 and k1 rest")
        yield* TestClock.adjust("60 seconds")
        const third = yield* runGenerationTurn()
        assert.deepStrictEqual(third.attempts.map((a) => a.keyIndex), [0], "the rate-limited key is back after 60 s")
        const resting = yield* (yield* KeyPool).snapshot
        assert.deepStrictEqual([...resting.keys()], [1], "the key with an API error rests 5 minutes")
        yield* TestClock.adjust("4 minutes")
        assert.strictEqual((yield* (yield* KeyPool).snapshot).size, 0)
      })))

  it.effect("[67] when every key rests, the one that wakes first is still tried", () =>
    withTurn({
      models: ["only"],
      keys: ["k0", "k1"],
      script: ({ index }) => (index < 2 ? [rateLimited] : S.reply("ok"))
    }, () =>
      Effect.gen(function*() {
        const first = yield* runGenerationTurn()
        assert.strictEqual(first.status, "error")
        const second = yield* runGenerationTurn()
        assert.deepStrictEqual(second.attempts, [{ model: "only", keyIndex: 0, status: "completed" }])
      })))

  it.effect("[68] every attempt fails: only the final attempt's error is shown", () =>
    withTurn({
      models: ["m1", "m2"],
      keys: ["k0", "k1"],
      script: ({ request }) => [S.fail("Server", `${request.model}/${keyOf(request)} is down`, { status: 503 })]
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.status, "error")
        assert.deepStrictEqual(result.attempts.map((a) => `${a.model}#${a.keyIndex}`), ["m1#0", "m1#1", "m2#0"], "m2 finds both keys resting")
        const notices = yield* collected.notices
        assert.strictEqual(notices.length, 1)
        assert.deepStrictEqual(notices[0], UserNotice.ProviderFailed({ model: "m2", reason: "service_error" }))
      })))

  it.effect("[decision 20] public notices carry no internals: classes and model names in the channel, the vendor's words in the thought log", () =>
    withTurn({
      models: ["m1", "m2"],
      script: ({ request }) => [S.fail(request.model === "m1" ? "Network" : "Server", `connect ECONNREFUSED 10.0.0.7:8443 (${request.model})`, { status: 502 })]
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        yield* runGenerationTurn()
        const shown = JSON.stringify(yield* collected.notices)
        assert.notInclude(shown, "10.0.0.7")
        assert.notInclude(shown, "ECONNREFUSED")
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.ProviderFailed({ model: "m2", reason: "service_error" })])
        const hidden = yield* tools.thoughtLog.notices
        assert.deepStrictEqual(hidden.map((notice) => notice.kind), ["provider_failed", "provider_failed"])
        assert.include(hidden[0]?.description ?? "", "10.0.0.7:8443 (m1)")
        assert.include(hidden[0]?.title ?? "", "the service could not be reached")
      })))

  it.effect("[69] a fallback answered but the user already moved on: no notice, the pending request is cleared", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) => (request.model === "primary" ? [rateLimited] : S.reply("answer"))
    }, ({ collected, signals }) =>
      Effect.gen(function*() {
        // A new message lands right after the fallback's pass ended, before the turn finalizes.
        const endPass = collected.sink.endPass
        const sink = {
          ...collected.sink,
          endPass: (mode: "flush" | "discard") =>
            Effect.tap(endPass(mode), (text) => (text === "answer" ? signals.requestFollowUp : Effect.void))
        }
        const result = yield* runGenerationTurn().pipe(Effect.provideService(ResponseSink, sink))
        assert.strictEqual(result.status, "completed")
        assert.deepStrictEqual(yield* collected.notices, [])
        assert.isTrue(Option.isNone(yield* signals.current))
      })))

  it.effect("[69] same with a stop registered after the answer: no notice, the stop is cleared", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) => (request.model === "primary" ? [rateLimited] : S.reply("answer"))
    }, ({ collected, signals }) =>
      Effect.gen(function*() {
        const endPass = collected.sink.endPass
        const sink = {
          ...collected.sink,
          endPass: (mode: "flush" | "discard") =>
            Effect.tap(endPass(mode), (text) => (text === "answer" ? signals.requestStop({ requesterId: "u1" }) : Effect.void))
        }
        const result = yield* runGenerationTurn().pipe(Effect.provideService(ResponseSink, sink))
        assert.strictEqual(result.status, "completed")
        assert.deepStrictEqual(yield* collected.notices, [])
        assert.isTrue(Option.isNone(yield* signals.current))
      })))

  it.effect("[70][decision 18] a destination that refuses the reply ends the turn as error/delivery_failed: no further model, no key rotation, a thought-log notice", () =>
    withTurn({
      models: ["primary", "fallback"],
      keys: ["k1", "k2"],
      script: [[S.text("a"), S.text("b"), S.hang], S.reply("never")],
      sink: { failFrom: { delivery: 1, error: new DeliveryError({ reason: "missing_access", detail: "403 Missing Access" }) } }
    }, ({ collected, tools }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.deepStrictEqual([result.status, result.reason], ["error", "delivery_failed"])
        assert.deepStrictEqual(result.attempts, [{ model: "primary", keyIndex: 0, status: "error" }])
        assert.strictEqual((yield* (yield* ScriptedProbe).calls).length, 1)
        assert.strictEqual((yield* (yield* ScriptedProbe).calls)[0]?.ending, "abandoned", "the provider request is closed")
        assert.strictEqual(yield* collected.delivered, "a")
        assert.deepStrictEqual(yield* collected.notices, [], "nothing more is posted to a destination that refuses it")
        const notices = yield* tools.thoughtLog.notices
        assert.deepStrictEqual(notices.map((notice) => notice.kind), ["delivery_failed"])
        assert.include(notices[0]?.description ?? "", "missing_access")
      })))

  it.effect("[decision 18] a sink that fails while ending a completed pass never reports completed", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: [S.reply("all of it"), S.reply("never")],
      sink: { chunkSize: 1000, failFrom: { delivery: 0, error: new DeliveryError({ reason: "failed", detail: "Discord 5xx, retries used up" }) } }
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.deepStrictEqual([result.status, result.reason, result.text], ["error", "delivery_failed", ""])
        assert.strictEqual(result.attempts.length, 1, "no other model can deliver to it either")
      })))

  it.effect("[issue 11.4] a sticker goes out only with a completed reply: not after /kill, a follow-up interrupt or the tool-error cap", () =>
    Effect.gen(function*() {
      const wave = { id: "111", name: "wave" }
      const sticker = stickerPickTool(wave)
      const failing = constantTool("broken", toolFailure("nope"))
      const ending = (script: S.Script, act: (harness: LoopHarness) => Effect.Effect<void> = () => Effect.void) =>
        withTurn({ models: ["primary"], tools: [sticker, failing], stickers: [wave], script }, (harness) =>
          Effect.gen(function*() {
            const fiber = yield* Effect.forkChild(runGenerationTurn())
            yield* act(harness)
            const result = yield* Fiber.join(fiber)
            return [result.status, result.stickerSelection?.id ?? "none"]
          }))
      assert.deepStrictEqual(yield* ending([S.callTool("select_sticker_for_response"), S.reply("Hi!")]), ["completed", "111"])
      const askAfterPick = (request: Effect.Effect<void>) =>
        Effect.gen(function*() {
          yield* TestClock.adjust("1 second")
          yield* request
          yield* TestClock.adjust("1 second")
        })
      const slowReply = [S.callTool("select_sticker_for_response"), [S.sleep("5 seconds"), S.text("late")]]
      assert.deepStrictEqual(
        yield* ending(slowReply, (harness) => askAfterPick(harness.signals.kill({ requesterId: "u1" }))),
        ["stopped_by_user", "none"]
      )
      assert.deepStrictEqual(
        yield* ending(slowReply, (harness) => askAfterPick(harness.signals.requestFollowUp)),
        ["follow_up_interrupt", "none"]
      )
      const capped = [S.callTool("select_sticker_for_response"), ...Array.from({ length: 5 }, () => S.callTool("broken"))]
      assert.deepStrictEqual(yield* ending(capped), ["error", "none"])
    }))


  it.effect("[13] a call without a name from the primary is the model's error: the next model answers", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) =>
        request.model === "primary"
          ? [S.ScriptStep.Emit({ event: ProviderEvent.ToolCall({ call: {} as FunctionCall }) }), S.finish("tool_calls")]
          : S.reply("from the fallback")
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.deepStrictEqual(result.attempts.map((a) => [a.model, a.status]), [["primary", "error"], ["fallback", "completed"]])
        assert.strictEqual(result.text, "from the fallback")
      })))

  it.effect("[71] a defect inside an attempt: status error, one error notice, remaining fallbacks not tried", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) => {
        if (request.model === "primary") throw new Error("adapter bug")
        return S.reply("never")
      }
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.status, "error")
        assert.deepStrictEqual(result.attempts, [{ model: "primary", keyIndex: 0, status: "error" }])
        assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["ProviderFailed"])
      })))

  it.effect("[71] under user impersonation the defect propagates", () =>
    withTurn({
      models: ["primary", "fallback"],
      turn: { isUserImpersonation: true },
      script: () => {
        throw new Error("adapter bug")
      }
    }, () =>
      Effect.gen(function*() {
        const exit = yield* Effect.exit(runGenerationTurn())
        assert.isTrue(Exit.isFailure(exit))
      })))

  it.effect("[73] a timeout kept quiet because another key was pending is shown at finalize when nothing answered", () =>
    withTurn({ models: ["only"], keys: ["k0", "k1"], script: [[S.hang]] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runGenerationTurn())
        yield* TestClock.adjust("300 seconds")
        const result = yield* Fiber.join(fiber)
        assert.deepStrictEqual(result.attempts, [{ model: "only", keyIndex: 0, status: "timeout" }])
        assert.deepStrictEqual(yield* collected.notices, [UserNotice.StreamTimeout({ provider: "scripted", phase: "first_token" })])
      })))

  it.effect("[73] not surfaced: the deferred notice stays silent", () =>
    withTurn({ models: ["only"], keys: ["k0", "k1"], turn: { shouldSurfaceUserErrors: false }, script: [[S.hang]] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runGenerationTurn())
        yield* TestClock.adjust("300 seconds")
        yield* Fiber.join(fiber)
        assert.deepStrictEqual(yield* collected.notices, [])
      })))

  it.effect("[73] primary timed out quietly, the fallback timed out loudly: one timeout notice, not two", () =>
    withTurn({ models: ["m1", "m2"], script: [[S.hang], [S.hang]] }, ({ collected }) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(runGenerationTurn())
        yield* TestClock.adjust("300 seconds")
        yield* TestClock.adjust("300 seconds")
        const result = yield* Fiber.join(fiber)
        assert.strictEqual(result.status, "timeout")
        assert.deepStrictEqual((yield* collected.notices).map((notice) => notice._tag), ["StreamTimeout"])
      })))

  it.effect("[decision 4] fallback after partial text: it continues from the delivered text, nothing lost or repeated", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) =>
        request.model === "primary" ? [S.text("The answer is "), S.text("forty"), S.fail("Server", "connection reset")] : S.reply("-two.")
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(yield* collected.delivered, "The answer is forty-two.")
        assert.strictEqual(result.text, "The answer is forty-two.")
        const requests = yield* (yield* ScriptedProbe).requests
        assert.strictEqual(requests[1]?.assistantPrefill, "The answer is forty")
      })))

  it.effect("[decision 4] a fallback model that repeats the delivered text has the repeat dropped", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) =>
        request.model === "primary"
          ? [S.text("Paris is the capital of France"), S.fail("Network", "socket hang up")]
          : [S.text("Paris is the capital "), S.text("of France and its largest city.")]
    }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(yield* collected.delivered, "Paris is the capital of France and its largest city.")
        assert.strictEqual(result.text, "Paris is the capital of France and its largest city.")
      })))

  it.effect("[decision 4] key rotation continues too; tools of a failed attempt never run twice", () =>
    Effect.gen(function*() {
      const save = yield* makeRecordingTool("save_note", () => Effect.succeed(toolSuccess({ saved: true })))
      yield* withTurn({
        models: ["only"],
        keys: ["k0", "k1"],
        tools: [save.tool],
        script: ({ request, index }) =>
          index === 0
            ? S.callTool("save_note", { text: "x" }, "Saving it.")
            : keyOf(request) === "k0"
            ? [S.text(" Done"), rateLimited]
            : S.reply(", all saved.")
      }, ({ collected }) =>
        Effect.gen(function*() {
          const result = yield* runGenerationTurn()
          assert.strictEqual(result.status, "completed")
          assert.strictEqual((yield* Ref.get(save.calls)).length, 1)
          const requests = yield* (yield* ScriptedProbe).requests
          assert.strictEqual(requests[2]?.functionHistory.length, 1, "the replacement sees the tool's result")
          assert.strictEqual(requests[2]?.assistantPrefill, " Done")
          assert.strictEqual(yield* collected.delivered, "Saving it. Done, all saved.")
          assert.strictEqual(result.text, "Done, all saved.")
          assert.deepStrictEqual(yield* collected.notices, [], "no fallback notice for a key rotation on the same model")
        }))
    }))

  it.effect("[5] usage and iterations add up across attempts", () =>
    withTurn({
      models: ["primary", "fallback"],
      script: ({ request }) =>
        request.model === "primary" ? [S.usage(10, 1), rateLimited] : [S.text("ok"), S.usage(20, 2)]
    }, () =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn()
        assert.strictEqual(result.iterations, 2)
        assert.deepStrictEqual(result.usage, { inputTokens: 30, outputTokens: 3, totalTokens: 33 })
      })))

  it.effect("[5] an empty plan is skipped", () =>
    withTurn({ models: [], script: [] }, () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* runGenerationTurn()).status, "skipped")
      })))
})
