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
import { completionEvents, makeChatCompletionsDecoder } from "./chatCompletionsDecoder"
import { chatCompletionsBody } from "./chatCompletionsRequest"

/**
 * OpenAI-compatible Chat Completions (OpenAI, OpenRouter, DeepSeek, Ollama, llama.cpp, vLLM,
 * LM Studio...): `POST {baseUrl}/chat/completions` with `stream: true`, decoded from SSE.
 */

export const providerName = "openai-compatible"
export const defaultBaseUrl = "https://api.openai.com/v1"

export interface OpenAiCompatibleOptions {
  /** Up to the version segment, e.g. `http://127.0.0.1:11434/v1`. */
  readonly baseUrl?: string | undefined
  readonly toolCalling?: ToolCallingMode | undefined
  /** Extra headers (OpenRouter's `HTTP-Referer` / `X-Title`...). */
  readonly headers?: Readonly<Record<string, string>> | undefined
  readonly maxTokensParameter?: "max_tokens" | "max_completion_tokens" | undefined
  readonly parallelToolCalls?: boolean | undefined
  /** Ask for the final usage chunk (`stream_options.include_usage`, default true); some old servers reject it. */
  readonly includeUsage?: boolean | undefined
  /** Merged into every request body (OpenRouter `provider` routing, `reasoning` options...). */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
  /** `BOT_JSON_REPAIR_MAX_CHARS`. */
  readonly jsonRepairMaxChars?: number | undefined
  /** `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
  readonly verbatimMaxBufferChars?: number | undefined
}

export const make = Effect.fnUntraced(function*(options: OpenAiCompatibleOptions = {}) {
  const client = vendorClient(yield* HttpClient.HttpClient)
  const url = joinUrl(options.baseUrl ?? defaultBaseUrl, "chat/completions")
  const decoderOptions = { provider: providerName, maxRepairChars: options.jsonRepairMaxChars ?? defaultJsonRepairMaxChars }
  const bodyOptions = {
    maxTokensParameter: options.maxTokensParameter ?? "max_tokens",
    parallelToolCalls: options.parallelToolCalls,
    includeUsage: options.includeUsage ?? true,
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
        body: chatCompletionsBody(request, bodyOptions)
      })
      const body = yield* sendStreaming(client, httpRequest, providerName)
      if (body._tag === "Sse") return body.decode(() => makeChatCompletionsDecoder(decoderOptions))
      const step = completionEvents(body.value, decoderOptions)
      const events = Stream.fromIterable(step.out)
      return step.then === undefined ? events : Stream.concat(events, Stream.execute(step.then))
    }))

  const model = LanguageModel.of({ name: providerName, stream })
  return options.toolCalling === "verbatim"
    ? withVerbatimToolCalling(model, { maxBufferChars: options.verbatimMaxBufferChars })
    : model
})

export const layer = (options: OpenAiCompatibleOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/** Reads `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS`, `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
export const layerConfig = (options: Omit<OpenAiCompatibleOptions, "baseUrl" | "toolCalling"> = {}) =>
  Layer.unwrapEffect(Effect.map(httpProviderSettings, (settings) =>
    layer({
      ...options,
      baseUrl: settings.baseUrl,
      toolCalling: settings.toolCalling,
      jsonRepairMaxChars: settings.jsonRepairMaxChars,
      verbatimMaxBufferChars: settings.verbatimMaxBufferChars
    })))
