import type * as HttpClient from "effect/http/HttpClient"
import { Effect, Layer } from "effect"
import { LanguageModel } from "../LanguageModel"
import { type BearerJsonOptions, makeBearerJsonModel, optionsFromSettings } from "./bearerJsonModel"
import { makeResponsesDecoder, wholeResponseEvents } from "./responsesDecoder"
import { responsesBody } from "./responsesRequest"

/**
 * The OpenAI Responses API (OpenAI's API for reasoning models with tools): `POST
 * {baseUrl}/responses` with `stream: true`, decoded from its semantic SSE events. Stateless by
 * default (`store: false`): every pass sends the conversation, with the encrypted reasoning
 * items of earlier calls, so nothing is kept at OpenAI between passes.
 */

const providerName = "openai-responses"
const defaultBaseUrl = "https://api.openai.com/v1"

export interface OpenAiResponsesOptions extends BearerJsonOptions {
  /** `store` of the request (default false: nothing kept at OpenAI, reasoning replayed encrypted). */
  readonly store?: boolean | undefined
  /** Ask for encrypted reasoning items (default true); servers without reasoning models may reject it. */
  readonly includeEncryptedReasoning?: boolean | undefined
  readonly parallelToolCalls?: boolean | undefined
  /** Merged into every request body (`reasoning: {effort, summary: "auto"}`, `service_tier`...). */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
}

const make = (options: OpenAiResponsesOptions = {}) => {
  const bodyOptions = {
    store: options.store ?? false,
    includeEncryptedReasoning: options.includeEncryptedReasoning ?? true,
    parallelToolCalls: options.parallelToolCalls,
    extraBody: options.extraBody
  } as const
  return makeBearerJsonModel({
    providerName,
    defaultBaseUrl,
    path: "responses",
    body: (request) => responsesBody(request, bodyOptions),
    decoder: makeResponsesDecoder,
    whole: wholeResponseEvents
  }, options)
}

export const layer = (options: OpenAiResponsesOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/** Reads `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `BOT_JSON_REPAIR_MAX_CHARS`, `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
export const layerConfig = (options: Omit<OpenAiResponsesOptions, "baseUrl" | "toolCalling"> = {}) =>
  Layer.unwrap(Effect.map(optionsFromSettings, (settings) => layer({ ...options, ...settings })))
