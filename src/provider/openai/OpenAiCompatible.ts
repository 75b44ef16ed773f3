import type * as HttpClient from "effect/http/HttpClient"
import { Effect, Layer } from "effect"
import { LanguageModel } from "../LanguageModel"
import { type BearerJsonOptions, makeBearerJsonModel, optionsFromSettings } from "./bearerJsonModel"
import { completionEvents, makeChatCompletionsDecoder } from "./chatCompletionsDecoder"
import { chatCompletionsBody } from "./chatCompletionsRequest"

/**
 * OpenAI-compatible Chat Completions (OpenAI, OpenRouter, DeepSeek, Ollama, llama.cpp, vLLM,
 * LM Studio...): `POST {baseUrl}/chat/completions` with `stream: true`, decoded from SSE.
 */

const providerName = "openai-compatible"
const defaultBaseUrl = "https://api.openai.com/v1"

export interface OpenAiCompatibleOptions extends BearerJsonOptions {
  readonly maxTokensParameter?: "max_tokens" | "max_completion_tokens" | undefined
  readonly parallelToolCalls?: boolean | undefined
  /** Ask for the final usage chunk (`stream_options.include_usage`, default true); some old servers reject it. */
  readonly includeUsage?: boolean | undefined
  /** Merged into every request body (OpenRouter `provider` routing, `reasoning` options...). */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
}

const make = (options: OpenAiCompatibleOptions = {}) => {
  const bodyOptions = {
    maxTokensParameter: options.maxTokensParameter ?? "max_tokens",
    parallelToolCalls: options.parallelToolCalls,
    includeUsage: options.includeUsage ?? true,
    extraBody: options.extraBody
  } as const
  return makeBearerJsonModel({
    providerName,
    defaultBaseUrl,
    path: "chat/completions",
    body: (request) => chatCompletionsBody(request, bodyOptions),
    decoder: makeChatCompletionsDecoder,
    whole: completionEvents
  }, options)
}

export const layer = (options: OpenAiCompatibleOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/** Reads `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS`, `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
export const layerConfig = (options: Omit<OpenAiCompatibleOptions, "baseUrl" | "toolCalling"> = {}) =>
  Layer.unwrap(Effect.map(optionsFromSettings, (settings) => layer({ ...options, ...settings })))
