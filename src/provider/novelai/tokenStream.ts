import { Effect, Predicate } from "effect"
import type { ProviderError } from "../../domain/ProviderError"
import type { Decoder, DecodeStep } from "../decodeWith"
import { fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import type { SseFrame } from "../sse/Sse"
import { parseJsonFrame } from "../jsonFrame"

/**
 * NovelAI's `/ai/generate-stream` answer: one SSE event per generated token,
 *
 *     event: newToken
 *     id: 7
 *     data: {"token":" the","ptr":7,"final":false,"logprobs":null}
 *
 * the last one with `"final": true`; an `{"error": …}` payload is a failure. Each event is one
 * token, which is how the session counts its output budget (NovelAI reports no usage).
 */
export type TokenEvent =
  | { readonly _tag: "Token"; readonly text: string }
  | { readonly _tag: "Final" }
  | { readonly _tag: "KeepAlive" }

const keepAlive: TokenEvent = { _tag: "KeepAlive" }
const final: TokenEvent = { _tag: "Final" }

/**
 * Decodes the token events. The body ending cleanly ends the fragment (a dropped connection is a
 * transport error of the HTTP client); a body with no event at all is `InvalidResponse`, as is
 * data that is not JSON.
 */
export const makeTokenDecoder = (provider: string): Decoder<SseFrame, TokenEvent, ProviderError> => {
  let sawFrames = false
  let done = false
  return {
    push: (frames): DecodeStep<TokenEvent, ProviderError> => {
      const out: Array<TokenEvent> = []
      for (const frame of frames) {
        sawFrames = true
        if (frame._tag === "Comment") {
          out.push(keepAlive)
          continue
        }
        const parsed = parseJsonFrame(frame.data)
        if (!parsed.ok) {
          done = true
          return { out, then: Effect.fail(invalidResponse(provider, `an event whose data is not JSON: ${frame.data.slice(0, 200)}`)), done }
        }
        const value = parsed.value
        // Some gateways send the token as a bare JSON string.
        if (typeof value === "string") {
          out.push({ _tag: "Token", text: value })
          continue
        }
        if (!Predicate.isObject(value)) {
          done = true
          return { out, then: Effect.fail(invalidResponse(provider, `an event of unexpected shape: ${frame.data.slice(0, 200)}`)), done }
        }
        if (value.error !== undefined && value.error !== null) {
          done = true
          return { out, then: Effect.fail(fromStreamErrorPayload(provider, value)), done }
        }
        if (typeof value.token === "string" && (value.token.length > 0 || value.final !== true)) {
          out.push({ _tag: "Token", text: value.token })
        }
        if (value.final === true) {
          out.push(final)
          done = true
          break
        }
      }
      return { out, done }
    },
    end: () => (done || sawFrames ? { out: [] } : { out: [], then: Effect.fail(invalidResponse(provider, "the response body contained no server-sent events")) })
  }
}
