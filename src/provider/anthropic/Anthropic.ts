import * as HttpClient from "effect/http/HttpClient"
import { Effect, Layer, Predicate, Redacted, Stream } from "effect"
import type { ProviderError } from "../../domain/ProviderError"
import type { ProviderEvent } from "../../domain/ProviderEvent"
import type { GenerationRequest } from "../GenerationRequest"
import { defaultJsonRepairMaxChars } from "../jsonRepair"
import { LanguageModel } from "../LanguageModel"
import { anthropicPromptCacheSetting, httpProviderSettings, type ToolCallingMode } from "../providerConfig"
import { fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import { joinUrl, jsonPost, sendStreaming, vendorClient } from "../providerHttp"
import { sseEventLimit } from "../sse/SseParser"
import { withVerbatimToolCalling } from "../verbatim/verbatimToolCalling"
import { makeMessagesDecoder } from "./messagesDecoder"
import { messagesBody } from "./messagesRequest"
import { withCacheBreakpoints } from "./promptCache"

/** Anthropic Messages API: `POST {baseUrl}/v1/messages` with `stream: true`, decoded from SSE. */

const providerName = "anthropic"
const defaultBaseUrl = "https://api.anthropic.com"
const defaultAnthropicVersion = "2023-06-01"
/** The `max_tokens` sent when the request sets none (`ANTHROPIC_MAX_OUTPUT_TOKENS`); the API requires one. */
export const defaultMaxTokens = 8192

export interface AnthropicOptions {
  /** `https://api.anthropic.com` (a trailing `/v1` is accepted too). */
  readonly baseUrl?: string | undefined
  readonly toolCalling?: ToolCallingMode | undefined
  readonly anthropicVersion?: string | undefined
  /** `anthropic-beta` header value, when a beta feature is wanted. */
  readonly anthropicBeta?: string | undefined
  readonly defaultMaxTokens?: number | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Merged into every request body (e.g. `thinking: {type: "enabled", budget_tokens}`). */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
  readonly jsonRepairMaxChars?: number | undefined
  readonly verbatimMaxBufferChars?: number | undefined
  /** Prompt-caching breakpoints on the tools, system prompt and history (`promptCache.ts`); default on. */
  readonly promptCache?: boolean | undefined
}

const messagesUrl = (baseUrl: string): string =>
  /\/v1\/?$/.test(baseUrl) ? joinUrl(baseUrl, "messages") : joinUrl(baseUrl, "v1/messages")

const make = Effect.fnUntraced(function*(options: AnthropicOptions = {}) {
  const client = vendorClient(yield* HttpClient.HttpClient)
  const url = messagesUrl(options.baseUrl ?? defaultBaseUrl)
  const decoderOptions = { provider: providerName, maxRepairChars: options.jsonRepairMaxChars ?? defaultJsonRepairMaxChars }
  const bodyOptions = { defaultMaxTokens: options.defaultMaxTokens ?? defaultMaxTokens, extraBody: options.extraBody }
  const bodyOf = options.promptCache === false
    ? (request: GenerationRequest) => messagesBody(request, bodyOptions)
    : (request: GenerationRequest) => withCacheBreakpoints(messagesBody(request, bodyOptions))

  const stream = (request: GenerationRequest): Stream.Stream<ProviderEvent, ProviderError> =>
    Stream.unwrap(Effect.gen(function*() {
      const httpRequest = yield* jsonPost({
        provider: providerName,
        url,
        headers: {
          "anthropic-version": options.anthropicVersion ?? defaultAnthropicVersion,
          ...(options.anthropicBeta === undefined ? {} : { "anthropic-beta": options.anthropicBeta }),
          ...options.headers,
          ...(request.apiKey === undefined ? {} : { "x-api-key": Redacted.value(request.apiKey) })
        },
        body: bodyOf(request)
      })
      const body = yield* sendStreaming(client, httpRequest, providerName, sseEventLimit(decoderOptions.maxRepairChars))
      if (body._tag === "Sse") return body.decode(() => makeMessagesDecoder(decoderOptions))
      // A JSON body to a streaming request is an error envelope, or a server that cannot stream.
      const value = body.value
      return yield* Predicate.isObject(value) && "error" in value
        ? fromStreamErrorPayload(providerName, value)
        : invalidResponse(providerName, "expected an event stream but got a JSON document")
    }))

  const model = LanguageModel.of({ name: providerName, stream })
  return options.toolCalling === "verbatim"
    ? withVerbatimToolCalling(model, { maxBufferChars: options.verbatimMaxBufferChars })
    : model
})

export const layer = (options: AnthropicOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/**
 * Reads `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS`,
 * `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS` and `ANTHROPIC_PROMPT_CACHE`.
 */
export const layerConfig = (options: Omit<AnthropicOptions, "baseUrl" | "toolCalling" | "promptCache"> = {}) =>
  Layer.unwrap(Effect.map(Effect.all([httpProviderSettings, anthropicPromptCacheSetting]), ([settings, promptCache]) =>
    layer({
      ...options,
      baseUrl: settings.baseUrl,
      toolCalling: settings.toolCalling,
      jsonRepairMaxChars: settings.jsonRepairMaxChars,
      verbatimMaxBufferChars: settings.verbatimMaxBufferChars,
      promptCache
    })))
