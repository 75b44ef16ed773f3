import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Option, Redacted, Stream } from "effect"
import { TurnObserver } from "../../src/chat/TurnObserver"
import { defaultOpsSettings } from "../../src/config/OpsConfig"
import { DEFAULT_PERSONA_NAME } from "../../src/config/PersonaConfig"
import { instrumentedModelLayer } from "../../src/ops/instrumentedModel"
import { instrumentToolRegistry } from "../../src/ops/instrumentedTools"
import { observedTurnsLayer } from "../../src/ops/observedTurns"
import { telemetryLayer } from "../../src/ops/Telemetry"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { LanguageModel } from "../../src/provider/LanguageModel"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import { make as makeToolRegistry } from "../../src/tools/ToolRegistry"
import { fakeOtlp } from "../support/fakeOtlp"
import { fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { waitUntil } from "../support/mcpServers/mcpTestKit"
import { HttpLive, request } from "../provider/harness"

const someModel = LanguageModel.of({ name: "fixed", stream: () => Stream.empty })

describe("instrumentation costs nothing when telemetry is off", () => {
  it.effect("without OTEL_EXPORTER_OTLP_ENDPOINT or HEALTH_PORT the model, the registry and the turns are left as they are", () =>
    Effect.gen(function*() {
      const model = yield* Effect.provide(LanguageModel, instrumentedModelLayer(Layer.succeed(LanguageModel, someModel)))
      assert.strictEqual(model, someModel, "the very same model: no wrapper on the stream")
      const registry = yield* Effect.provide(makeToolRegistry, GuildToolSource.none)
      assert.strictEqual(yield* instrumentToolRegistry(registry), registry)
      const observer = yield* Effect.provide(TurnObserver, observedTurnsLayer)
      const turn = Effect.never
      const input = {
        channelId: "c",
        guildId: undefined,
        userId: "u",
        messageId: undefined,
        isDM: true,
        locale: "en",
        persona: { id: undefined, name: DEFAULT_PERSONA_NAME, avatarUrl: undefined, systemPrompt: "" },
        loadContext: Effect.succeed([]),
        shouldSurfaceUserErrors: true,
        openSink: Effect.never
      }
      assert.strictEqual(observer.observe(input, turn), turn, "the turn effect itself, unwrapped")
    }).pipe(Effect.provide(telemetryLayer(defaultOpsSettings))))

  it.effect("with telemetry on, the model is wrapped (the check above can fail)", () =>
    Effect.gen(function*() {
      const model = yield* Effect.provide(LanguageModel, instrumentedModelLayer(Layer.succeed(LanguageModel, someModel)))
      assert.notStrictEqual(model, someModel)
    }).pipe(Effect.provide(telemetryLayer({ ...defaultOpsSettings, healthPort: Option.some(0) }))))
})

describe("vendors never receive trace headers, with the OTLP tracer installed", () => {
  const traceHeaders = ["traceparent", "tracestate", "b3", "x-b3-traceid", "x-b3-spanid", "uber-trace-id"]

  it.live("a provider request inside a traced pass carries no trace context; the pass span is exported", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const vendor = yield* fakeLlmServer()
      vendor.enqueue(openAiStream([textChunk("hi"), finishChunk("stop")]))
      const telemetry = telemetryLayer(
        { ...defaultOpsSettings, otlp: Option.some({ endpoint: collector.url, headers: Redacted.make({}), serviceName: "t" }) },
        { exportInterval: Duration.millis(100) }
      )
      const events = yield* Effect.gen(function*() {
        const model = yield* LanguageModel
        return yield* Stream.runCollect(model.stream(request({ model: "gpt-test" }))).pipe(Effect.withSpan("a caller's span"))
      }).pipe(
        Effect.provide(instrumentedModelLayer(OpenAiCompatible.layer({ baseUrl: `${vendor.url}/v1` }).pipe(Layer.provide(HttpLive)))),
        Effect.provide(telemetry)
      )
      assert.isAbove(events.length, 0)
      const headers = vendor.requests[0]?.headers ?? {}
      for (const name of traceHeaders) assert.isUndefined(headers[name], `${name} was sent to the vendor`)
      yield* waitUntil(() => collector.spans.some((span) => span.name === "loopcord.pass"), "the pass span", 20_000)
      const pass = collector.spans.find((span) => span.name === "loopcord.pass")
      assert.strictEqual(pass?.attributes["gen_ai.request.model"], "gpt-test")
      assert.notInclude(JSON.stringify(collector.spans), "Bearer", "no credential in any span")
    }), 60_000)
})
