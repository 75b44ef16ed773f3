import { Effect, Redacted, Stream } from "effect"
import { HttpClient } from "effect/http"
import type { ProviderError } from "../../domain/ProviderError"
import type { ProviderEvent } from "../../domain/ProviderEvent"
import type { DecodeStep, Decoder } from "../decodeWith"
import type { GenerationRequest } from "../GenerationRequest"
import { defaultJsonRepairMaxChars } from "../jsonRepair"
import { LanguageModel } from "../LanguageModel"
import { joinUrl, jsonPost, sendStreaming, unwrapStream, vendorClient } from "../providerHttp"
import type { SseFrame } from "../sse/Sse"
import { sseEventLimit } from "../sse/SseParser"

/** What every OpenAI-style provider is configured with. */
export interface BearerJsonOptions {
  /** Up to the version segment, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl?: string | undefined
  /** Not ported: verbatim tool calling (a text protocol for models without native calls). */
  readonly toolCalling?: "native" | undefined
  /** Extra headers (OpenRouter's `HTTP-Referer` / `X-Title`...). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** `BOT_JSON_REPAIR_MAX_CHARS`. */
  readonly jsonRepairMaxChars?: number | undefined
  /** `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
  readonly verbatimMaxBufferChars?: number | undefined
}

export interface DecoderOptions {
  readonly provider: string
  readonly maxRepairChars: number
}

/** One OpenAI-style API: where it is posted, its body, and how its answer is decoded. */
export interface BearerJsonApi {
  readonly providerName: string
  readonly defaultBaseUrl: string
  /** Under the base URL, e.g. `chat/completions`. */
  readonly path: string
  readonly body: (request: GenerationRequest) => unknown
  /** The SSE frame decoder of one answer. */
  readonly decoder: (options: DecoderOptions) => Decoder<SseFrame, ProviderEvent, ProviderError>
  /** The events of a whole JSON answer (a server that ignored `stream: true`). */
  readonly whole: (value: unknown, options: DecoderOptions) => DecodeStep<ProviderEvent, ProviderError>
}

/**
 * A LanguageModel for an OpenAI-style API (Chat Completions, Responses): `POST` JSON with the
 * key as a bearer token, the answer decoded from SSE, or from one JSON document when the server
 * ignored streaming; verbatim tool calling on top when configured.
 */
export const makeBearerJsonModel = Effect.fnUntraced(function*(api: BearerJsonApi, options: BearerJsonOptions) {
  const client = vendorClient(yield* HttpClient.HttpClient)
  const url = joinUrl(options.baseUrl ?? api.defaultBaseUrl, api.path)
  const decoderOptions: DecoderOptions = { provider: api.providerName, maxRepairChars: options.jsonRepairMaxChars ?? defaultJsonRepairMaxChars }

  const stream = (request: GenerationRequest): Stream.Stream<ProviderEvent, ProviderError> =>
    unwrapStream(Effect.gen(function*() {
      const httpRequest = yield* jsonPost({
        provider: api.providerName,
        url,
        headers: {
          ...options.headers,
          ...(request.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(request.apiKey)}` })
        },
        body: api.body(request)
      })
      const body = yield* sendStreaming(client, httpRequest, api.providerName, sseEventLimit(decoderOptions.maxRepairChars))
      if (body._tag === "Sse") return body.decode(() => api.decoder(decoderOptions))
      const step = api.whole(body.value, decoderOptions)
      const events = Stream.fromIterable(step.out)
      return step.then === undefined ? events : Stream.concat(events, Stream.fromEffectDrain(step.then)) // v3 Stream.execute → v4 Stream.fromEffectDrain
    }))

  return LanguageModel.of({ name: api.providerName, stream })
})
