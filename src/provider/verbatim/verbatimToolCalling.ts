import { Effect, Layer, type Stream } from "effect"
import type { ProviderError } from "../../domain/ProviderError"
import { ProviderEvent } from "../../domain/ProviderEvent"
import type { ToolDeclaration } from "../../domain/ToolDeclaration"
import { decodeWith, type DecodeStep } from "../decodeWith"
import { LanguageModel } from "../LanguageModel"
import { stripReasoningTags } from "../reasoningTags"
import { defaultVerbatimMaxBufferChars } from "../providerConfig"
import { withVerbatimScaffolding } from "./verbatimScaffolding"
import { type VerbatimOutput, VerbatimParser, verbatimToolsFrom } from "./VerbatimParser"

interface VerbatimOptions {
  /** `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS` (8192). */
  readonly maxBufferChars?: number | undefined
}

/**
 * Stream transformer: parses tool calls out of the text deltas. Prose is emitted as
 * `TextDelta`s, each parsed call as a `ToolCall` exactly like a native one, in the order written;
 * after the first call, prose is dropped (the pass ends at its calls) and a `stop` finish becomes
 * `tool_calls`; once the model has clearly moved on from calling (`VerbatimParser.ended`), the
 * stream is closed. Held text is released before `Finish` and at the end of the stream.
 */
export const parseVerbatimToolCalls = (tools: ReadonlyArray<ToolDeclaration>, options: VerbatimOptions = {}) =>
<E, R>(self: Stream.Stream<ProviderEvent, E, R>): Stream.Stream<ProviderEvent, E, R> =>
  decodeWith<ProviderEvent, ProviderEvent, never>(() => {
    const parser = new VerbatimParser(verbatimToolsFrom(tools), options.maxBufferChars ?? defaultVerbatimMaxBufferChars)
    const outputs: Array<VerbatimOutput> = []
    const drain = (out: Array<ProviderEvent>) => {
      for (const output of outputs) {
        out.push(
          output._tag === "Prose" ? ProviderEvent.TextDelta({ text: output.text }) : ProviderEvent.ToolCall({ call: output.call })
        )
      }
      outputs.length = 0
    }
    let nativeCall = false
    const push = (events: Iterable<ProviderEvent>): DecodeStep<ProviderEvent, never> => {
      const out: Array<ProviderEvent> = []
      for (const event of events) {
        switch (event._tag) {
          case "TextDelta":
            if (!nativeCall) {
              parser.feed(event.text, outputs)
              drain(out)
              // The calls are all there and the model writes on: the pass ends here.
              if (parser.ended) {
                out.push(ProviderEvent.Finish({ reason: "tool_calls" }))
                return { out, done: true }
              }
            }
            break
          case "ToolCall":
            // A provider that still called natively: the kind of call that came first wins
            // (text is no longer parsed once a native call came; native calls after a text call are dropped).
            if (!parser.called) {
              if (!nativeCall) {
                parser.flush(outputs)
                drain(out)
                nativeCall = true
              }
              out.push(event)
            }
            break
          case "Finish":
            parser.flush(outputs)
            drain(out)
            out.push(
              parser.called && event.reason === "stop" ? ProviderEvent.Finish({ reason: "tool_calls" }) : event
            )
            break
          default:
            out.push(event)
        }
      }
      return { out }
    }
    return {
      push,
      end: () => {
        const out: Array<ProviderEvent> = []
        parser.flush(outputs)
        drain(out)
        return { out }
      }
    }
  })(self)

type Model = LanguageModel["Service"]

/** Wraps a model so it speaks verbatim tool calls: scaffolding in, parsed calls out. */
export const withVerbatimToolCalling = (model: Model, options: VerbatimOptions = {}): Model =>
  LanguageModel.of({
    name: model.name,
    stream: (request): Stream.Stream<ProviderEvent, ProviderError> =>
      request.tools.length === 0
        ? model.stream(request)
        // Reasoning in the text is taken out first: a call it mentions is never parsed as one.
        : model.stream(withVerbatimScaffolding(request)).pipe(stripReasoningTags(), parseVerbatimToolCalls(request.tools, options))
  })

/** The same for any provider Layer: `verbatim(OpenAiCompatible.layer())`. */
export const verbatim = (options: VerbatimOptions = {}) =>
<E, R>(layer: Layer.Layer<LanguageModel, E, R>): Layer.Layer<LanguageModel, E, R> =>
  Layer.effect(LanguageModel, Effect.map(LanguageModel, (model) => withVerbatimToolCalling(model, options))).pipe(
    Layer.provide(layer)
  )
