import * as HttpClient from "@effect/platform/HttpClient"
import { Effect, Layer, Redacted, Stream } from "effect"
import type { ProviderError } from "../../domain/ProviderError"
import type { ProviderEvent } from "../../domain/ProviderEvent"
import type { GenerationRequest } from "../GenerationRequest"
import { defaultJsonRepairMaxChars } from "../jsonRepair"
import { LanguageModel } from "../LanguageModel"
import { httpProviderSettings, type ToolCallingMode } from "../providerConfig"
import { joinUrl, jsonPost, sendStreaming, unwrapStream, vendorClient } from "../providerHttp"
import { withVerbatimToolCalling } from "../verbatim/verbatimToolCalling"
import { makeResponsesDecoder, wholeResponseEvents } from "./responsesDecoder"
import { responsesBody } from "./responsesRequest"

/**
 * The OpenAI Responses API (OpenAI's API for reasoning models with tools): `POST
 * {baseUrl}/responses` with `stream: true`, decoded from its semantic SSE events. Stateless by
 * default (`store: false`): every pass sends the conversation, with the encrypted reasoning
 * items of earlier calls, so nothing is kept at OpenAI between passes.
 */

export const providerName = "openai-responses"
export const defaultBaseUrl = "https://api.openai.com/v1"

export interface OpenAiResponsesOptions {
  /** Up to the version segment, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl?: string | undefined
  readonly toolCalling?: ToolCallingMode | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** `store` of the request (default false: nothing kept at OpenAI, reasoning replayed encrypted). */
  readonly store?: boolean | undefined
  /** Ask for encrypted reasoning items (default true); servers without reasoning models may reject it. */
  readonly includeEncryptedReasoning?: boolean | undefined
  readonly parallelToolCalls?: boolean | undefined
  /** Merged into every request body (`reasoning: {effort, summary: "auto"}`, `service_tier`...). */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
  /** `BOT_JSON_REPAIR_MAX_CHARS`. */
  readonly jsonRepairMaxChars?: number | undefined
  /** `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
  readonly verbatimMaxBufferChars?: number | undefined
}

export const make = Effect.fnUntraced(function*(options: OpenAiResponsesOptions = {}) {
  const client = vendorClient(yield* HttpClient.HttpClient)
  const url = joinUrl(options.baseUrl ?? defaultBaseUrl, "responses")
  const decoderOptions = { provider: providerName, maxRepairChars: options.jsonRepairMaxChars ?? defaultJsonRepairMaxChars }
  const bodyOptions = {
    store: options.store ?? false,
    includeEncryptedReasoning: options.includeEncryptedReasoning ?? true,
    parallelToolCalls: options.parallelToolCalls,
    extraBody: options.extraBody
  } as const

  const stream = (request: GenerationRequest): Stream.Stream<ProviderEvent, ProviderError> =>
    unwrapStream(Effect.gen(function*() {
      const httpRequest = yield* jsonPost({
        provider: providerName,
        url,
        headers: {
          ...options.headers,
          ...(request.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(request.apiKey)}` })
        },
        body: responsesBody(request, bodyOptions)
      })
      const body = yield* sendStreaming(client, httpRequest, providerName)
      if (body._tag === "Sse") return body.decode(() => makeResponsesDecoder(decoderOptions))
      const step = wholeResponseEvents(body.value, decoderOptions)
      const events = Stream.fromIterable(step.out)
      return step.then === undefined ? events : Stream.concat(events, Stream.execute(step.then))
    }))

  const model = LanguageModel.of({ name: providerName, stream })
  return options.toolCalling === "verbatim"
    ? withVerbatimToolCalling(model, { maxBufferChars: options.verbatimMaxBufferChars })
    : model
})

export const layer = (options: OpenAiResponsesOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/** Reads `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS`, `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
export const layerConfig = (options: Omit<OpenAiResponsesOptions, "baseUrl" | "toolCalling"> = {}) =>
  Layer.unwrapEffect(Effect.map(httpProviderSettings, (settings) =>
    layer({
      ...options,
      baseUrl: settings.baseUrl,
      toolCalling: settings.toolCalling,
      jsonRepairMaxChars: settings.jsonRepairMaxChars,
      verbatimMaxBufferChars: settings.verbatimMaxBufferChars
    })))
