import { Effect, Layer, Metric, Stream } from "effect"
import type { ProviderError } from "../domain/ProviderError"
import type { ProviderEvent } from "../domain/ProviderEvent"
import { LanguageModel } from "../provider/LanguageModel"
import { Instrumentation, type InstrumentationShape } from "./Instrumentation"
import { providerErrorsTotal } from "./metrics"

type Model = LanguageModel["Service"]

/** What ended the pass, on its span: a tool call, a finish reason. Text deltas are not looked at. */
const annotatePass = (event: ProviderEvent): Effect.Effect<void> => {
  switch (event._tag) {
    case "ToolCall":
      return Effect.annotateCurrentSpan({ "loopcord.pass.outcome": "tool_call", "loopcord.pass.tool": event.call.name.slice(0, 64) })
    case "Finish":
      return Effect.annotateCurrentSpan("gen_ai.response.finish_reasons", event.reason)
    case "Usage":
      return Effect.annotateCurrentSpan({
        "gen_ai.usage.input_tokens": event.usage.inputTokens,
        "gen_ai.usage.output_tokens": event.usage.outputTokens
      })
    default:
      return Effect.void
  }
}

/** A request too long for the window is no provider failure: those are counted from the turn's context report. */
const countError = (error: ProviderError) =>
  error.reason === "ContextOverflow" ? Effect.void : Metric.update(Metric.withAttributes(providerErrorsTotal, { reason: error.reason }), 1)

/**
 * One span per provider stream, i.e. per pass of the loop (`loopcord.pass`, under the attempt's
 * span, model and provider as attributes), and provider errors counted by reason.
 */
export const instrumentModel = (model: Model, instrumentation: InstrumentationShape): Model => ({
  name: model.name,
  stream: (request) => {
    let stream = model.stream(request)
    if (instrumentation.metrics) stream = Stream.tapError(stream, countError)
    if (!instrumentation.tracing) return stream
    return stream.pipe(
      Stream.tap(annotatePass),
      Stream.tapError((error) => Effect.annotateCurrentSpan({ "loopcord.pass.outcome": "error", "loopcord.pass.error": error.reason })),
      Stream.withSpan("loopcord.pass", {
        kind: "client",
        attributes: { "gen_ai.system": model.name, "gen_ai.request.model": request.model }
      })
    )
  }
})

/** The model of `base`, instrumented when Instrumentation says so (else the very same model). */
export const instrumentedModelLayer = <E, R>(base: Layer.Layer<LanguageModel, E, R>): Layer.Layer<LanguageModel, E, R> =>
  Layer.effect(
    LanguageModel,
    Effect.gen(function*() {
      const model = yield* LanguageModel
      const instrumentation = yield* Instrumentation
      return instrumentation.tracing || instrumentation.metrics ? instrumentModel(model, instrumentation) : model
    })
  ).pipe(Layer.provide(base))
