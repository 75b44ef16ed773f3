import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Layer, Metric, Stream } from "effect"
import { TestClock } from "effect/testing"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { ProviderError } from "../../src/domain/ProviderError"
import type { TurnResult } from "../../src/domain/TurnResult"
import { makeCircuitBreaker } from "../../src/mcp/CircuitBreaker"
import { publishOpenBreakers } from "../../src/mcp/mcpMetrics"
import { Instrumentation } from "../../src/ops/Instrumentation"
import { instrumentModel } from "../../src/ops/instrumentedModel"
import { hashedGuild, makeToolLabels, MAX_TOOL_LABELS, mcpBreakersOpen, providerErrorsTotal, queuedTurns } from "../../src/ops/metrics"
import { attemptMoves } from "../../src/ops/observedTurns"
import { queueDepthLayer } from "../../src/ops/QueueDepth"
import { LanguageModel } from "../../src/provider/LanguageModel"
import * as S from "../../src/provider/scripted/Script"
import { message, queueLayer } from "../chat/harness"
import { makeHangingTool } from "../support/tools/testTools"
import { request } from "../provider/harness"

const result = (attempts: TurnResult["attempts"]): TurnResult => ({
  status: "completed",
  text: "",
  iterations: attempts.length,
  attempts,
  toolCalls: [],
  usage: undefined,
  toolResponseDelivered: false
})

describe("loopcord's metrics", () => {
  it("key rotations and model fallbacks are read off the attempts", () => {
    assert.deepStrictEqual(attemptMoves(result([{ model: "a", keyIndex: 0, status: "completed" }])), { rotations: 0, fallbacks: 0 })
    assert.deepStrictEqual(
      attemptMoves(result([
        { model: "a", keyIndex: 0, status: "error" },
        { model: "a", keyIndex: 1, status: "error" },
        { model: "b", keyIndex: 0, status: "error" },
        { model: "c", keyIndex: 0, status: "completed" }
      ])),
      { rotations: 1, fallbacks: 2 }
    )
  })

  it.effect("tool labels are bounded: the first distinct names, then `other`", () =>
    Effect.gen(function*() {
      const label = yield* makeToolLabels
      for (let index = 0; index < MAX_TOOL_LABELS; index++) assert.strictEqual(yield* label(`tool_${index}`), `tool_${index}`)
      assert.strictEqual(yield* label("one_too_many"), "other")
      assert.strictEqual(yield* label("tool_3"), "tool_3")
    }))

  it("a guild is a stable pseudonym, never the id", () => {
    assert.strictEqual(hashedGuild("1234567890"), hashedGuild("1234567890"))
    assert.notStrictEqual(hashedGuild("1234567890"), hashedGuild("1234567891"))
    assert.notInclude(hashedGuild("1234567890"), "1234567890")
    assert.strictEqual(hashedGuild(undefined), "dm")
  })

  it.effect("provider errors are counted by reason", () =>
    Effect.gen(function*() {
      const counter = Metric.withAttributes(providerErrorsTotal, { reason: "RateLimit" })
      const before = (yield* Metric.value(counter)).count
      const failing = LanguageModel.of({
        name: "failing",
        stream: () => Stream.fail(new ProviderError({ reason: "RateLimit", provider: "failing", detail: "429", status: 429 }))
      })
      const model = instrumentModel(failing, { tracing: false, metrics: true })
      yield* Effect.result(Stream.runDrain(model.stream(request())))
      assert.strictEqual((yield* Metric.value(counter)).count, before + 1)
    }))

  it.effect("the MCP breaker gauge follows trips, clears and elapsed quarantines", () =>
    Effect.gen(function*() {
      const breaker = yield* makeCircuitBreaker(Duration.seconds(60), publishOpenBreakers)
      yield* breaker.trip("a")
      yield* breaker.trip("b")
      assert.strictEqual((yield* Metric.value(mcpBreakersOpen)).value, 2)
      yield* breaker.clear("a")
      assert.strictEqual((yield* Metric.value(mcpBreakersOpen)).value, 1)
      yield* TestClock.adjust("61 seconds")
      yield* breaker.heldUntil("b")
      assert.strictEqual((yield* Metric.value(mcpBreakersOpen)).value, 0)
    }))

  it.effect("the queue-depth gauge samples the waiting turns every 5 s when metrics are on", () =>
    // The running turn is in a tool call, which the waiting messages do not interrupt (a streaming
    // reply would yield to them, and how many wait at the sample would be a race).
    Effect.flatMap(makeHangingTool("hang"), (hanging) =>
      Effect.gen(function*() {
        const queue = yield* ChannelQueue
        const running = yield* message("slow one")
        yield* queue.submit(running.input)
        yield* Deferred.await(hanging.started)
        for (const text of ["w1", "w2"]) yield* queue.submit((yield* message(text)).input)
        yield* Layer.build(queueDepthLayer)
        yield* TestClock.adjust("1 second")
        assert.strictEqual((yield* Metric.value(queuedTurns)).value, 2)
      }).pipe(Effect.provide(queueLayer({ script: () => S.callTool("hang"), tools: [hanging.tool] })))).pipe(
        Effect.provideService(Instrumentation, { tracing: false, metrics: true })
      ))
})
