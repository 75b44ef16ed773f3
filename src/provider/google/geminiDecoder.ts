import { Effect, Result, Predicate, Schema } from "effect"
import type { FunctionCall } from "../../domain/FunctionCall"
import type { ProviderError } from "../../domain/ProviderError"
import { type FinishReason, ProviderEvent } from "../../domain/ProviderEvent"
import { makeUsage } from "../../domain/TokenUsage"
import type { Decoder, DecodeStep } from "../decodeWith"
import { endedEarly, fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import type { SseFrame } from "../sse/Sse"
import { callsPastCap, maxCallsPerPass } from "../toolArguments"
import { parseJsonFrame } from "../jsonFrame"

const OptionalString = Schema.optional(Schema.NullOr(Schema.String))
const OptionalNumber = Schema.optional(Schema.NullOr(Schema.Number))

const Part = Schema.Struct({
  text: OptionalString,
  thought: Schema.optional(Schema.NullOr(Schema.Boolean)),
  thoughtSignature: OptionalString,
  functionCall: Schema.optional(Schema.NullOr(Schema.Struct({
    name: Schema.String,
    args: Schema.optional(Schema.Unknown),
    id: OptionalString
  })))
})

/** One `GenerateContentResponse` chunk (lenient: unknown part kinds are ignored). */
const GeminiChunk = Schema.Struct({
  candidates: Schema.optional(Schema.NullOr(Schema.Array(Schema.Struct({
    content: Schema.optional(Schema.NullOr(Schema.Struct({ parts: Schema.optional(Schema.NullOr(Schema.Array(Part))) }))),
    finishReason: OptionalString
  })))),
  promptFeedback: Schema.optional(Schema.NullOr(Schema.Struct({ blockReason: OptionalString }))),
  usageMetadata: Schema.optional(Schema.NullOr(Schema.Struct({
    promptTokenCount: OptionalNumber,
    candidatesTokenCount: OptionalNumber,
    thoughtsTokenCount: OptionalNumber,
    /** Part of the prompt served from a cached context (implicit or explicit caching). */
    cachedContentTokenCount: OptionalNumber,
    totalTokenCount: OptionalNumber
  }))),
  error: Schema.optional(Schema.Unknown)
})
type GeminiChunk = typeof GeminiChunk.Type

const decodeChunk = Schema.decodeUnknownResult(GeminiChunk)

const geminiFinishReasonOf = (raw: string): FinishReason => {
  switch (raw) {
    case "STOP":
      return "stop"
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content_filter"
    default:
      return "other"
  }
}

/**
 * Decodes Gemini SSE chunks: text parts as text, `thought: true` parts as reasoning, every
 * `functionCall` part (in one chunk or several) as its own `ToolCall`, in order, each with the
 * `thoughtSignature` of its own part (Gemini signs only the first of parallel calls; it sends
 * arguments whole, so there is nothing to repair), released with the finish after the usage;
 * text after the first call is not shown. `finishReason` is mapped (MAX_TOKENS ⇒ length, SAFETY
 * and friends ⇒ content_filter). Gemini has no end marker: a body that closes without a finish
 * reason is a `Network` error.
 */
export const makeGeminiDecoder = (options: { readonly provider: string }): Decoder<SseFrame, ProviderEvent, ProviderError> => {
  /** The pass's calls, held until the finish chunk so the final usage comes before them. */
  const calls: Array<FunctionCall> = []
  let callsOverflowed = false
  let finished = false
  let sawFrames = false
  let done = false
  const keepAlive = ProviderEvent.KeepAlive()

  const apply = (chunk: GeminiChunk, out: Array<ProviderEvent>): Effect.Effect<void, ProviderError> | undefined => {
    if (chunk.error !== undefined && chunk.error !== null) {
      done = true
      return Effect.fail(fromStreamErrorPayload(options.provider, chunk))
    }
    const candidate = chunk.candidates?.[0]
    for (const part of candidate?.content?.parts ?? []) {
      if (part.functionCall) {
        if (finished) continue
        if (calls.length >= maxCallsPerPass) {
          callsOverflowed = true
          continue
        }
        const fn = part.functionCall
        calls.push({
          name: fn.name,
          args: Predicate.isObject(fn.args) ? fn.args : {},
          ...(fn.id ? { id: fn.id } : {}),
          ...(part.thoughtSignature ? { thoughtSignature: part.thoughtSignature } : {})
        })
      } else if (part.text && calls.length === 0) {
        out.push(part.thought ? ProviderEvent.ReasoningDelta({ text: part.text }) : ProviderEvent.TextDelta({ text: part.text }))
      }
    }
    const blocked = chunk.promptFeedback?.blockReason
    const reason = candidate?.finishReason
      ? geminiFinishReasonOf(candidate.finishReason)
      : blocked
      ? "content_filter"
      : undefined
    const usage = chunk.usageMetadata
    // Usage is cumulative on every chunk: report it with the finish (and any correction after),
    // before the calls, since the loop may stop reading once it has them.
    if (usage && (reason !== undefined || finished)) {
      // Gemini counts thoughts apart from the candidates; output is both, thoughts being the reasoning part.
      out.push(ProviderEvent.Usage({
        usage: makeUsage({
          inputTokens: usage.promptTokenCount ?? 0,
          outputTokens: (usage.candidatesTokenCount ?? 0) + (usage.thoughtsTokenCount ?? 0),
          totalTokens: usage.totalTokenCount,
          cachedInputTokens: usage.cachedContentTokenCount,
          reasoningTokens: usage.thoughtsTokenCount
        })
      }))
    }
    if (reason !== undefined && !finished) {
      finished = true
      for (const call of calls) out.push(ProviderEvent.ToolCall({ call }))
      out.push(ProviderEvent.Finish({ reason: reason === "stop" && calls.length > 0 ? "tool_calls" : reason }))
      if (callsOverflowed) return callsPastCap(options.provider)
    }
    return undefined
  }

  const push = (frames: Iterable<SseFrame>): DecodeStep<ProviderEvent, ProviderError> => {
    const out: Array<ProviderEvent> = []
    let then: Effect.Effect<void, ProviderError> | undefined
    for (const frame of frames) {
      sawFrames = true
      if (frame._tag === "Comment") {
        out.push(keepAlive)
        continue
      }
      const parsed = parseJsonFrame(frame.data)
      if (!parsed.ok) {
        then = Effect.fail(invalidResponse(options.provider, `an event whose data is not JSON: ${frame.data.slice(0, 200)}`))
        done = true
        break
      }
      const decoded = decodeChunk(parsed.value)
      if (Result.isFailure(decoded)) {
        then = Effect.fail(invalidResponse(options.provider, `an event of unexpected shape: ${frame.data.slice(0, 200)}`))
        done = true
        break
      }
      then = apply(decoded.success, out)
      if (done) break
    }
    return { out, then, done }
  }

  return {
    push,
    end: () => (done || finished ? { out: [] } : { out: [], then: Effect.fail(endedEarly(options.provider, sawFrames)) })
  }
}
