import * as HttpClient from "effect/http/HttpClient"
import { Effect, Redacted, Stream } from "effect"
import type { ProviderError } from "../../domain/ProviderError"
import type { ProviderEvent } from "../../domain/ProviderEvent"
import type { DecodeStep, Decoder } from "../decodeWith"
import type { GenerationRequest } from "../GenerationRequest"
import { defaultJsonRepairMaxChars } from "../jsonRepair"
import { LanguageModel } from "../LanguageModel"
import { httpProviderSettings, type ToolCallingMode } from "../providerConfig"
import { joinUrl, jsonPost, sendStreaming, vendorClient } from "../providerHttp"
import type { SseFrame } from "../sse/Sse"
import { sseEventLimit } from "../sse/SseParser"
import { withVerbatimToolCalling } from "../verbatim/verbatimToolCalling"

/** What every OpenAI-style provider is configured with. */
export interface BearerJsonOptions {
  /** Up to the version segment, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl?: string | undefined
  readonly toolCalling?: ToolCallingMode | undefined
  /** Extra headers (OpenRouter's `HTTP-Referer` / `X-Title`...). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** `BOT_JSON_REPAIR_MAX_CHARS`. */
  readonly jsonRepairMaxChars?: number | undefined
  /** `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
  readonly verbatimMaxBufferChars?: number | undefined
}

interface DecoderOptions {
  readonly provider: string
  readonly maxRepairChars: number
}

/** One OpenAI-style API: where it is posted, its body, and how its answer is decoded. */
interface BearerJsonApi {
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
    Stream.unwrap(Effect.gen(function*() {
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
      return step.then === undefined ? events : Stream.concat(events, Stream.fromEffectDrain(step.then))
    }))

  const model = LanguageModel.of({ name: api.providerName, stream })
  return options.toolCalling === "verbatim"
    ? withVerbatimToolCalling(model, { maxBufferChars: options.verbatimMaxBufferChars })
    : model
})

/** The options `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS` and `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS` give. */
export const optionsFromSettings = Effect.map(httpProviderSettings, (settings): BearerJsonOptions => ({
  baseUrl: settings.baseUrl,
  toolCalling: settings.toolCalling,
  jsonRepairMaxChars: settings.jsonRepairMaxChars,
  verbatimMaxBufferChars: settings.verbatimMaxBufferChars
}))
