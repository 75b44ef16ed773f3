import * as HttpClient from "effect/http/HttpClient"
import { Effect, Layer, Predicate, Redacted, Stream } from "effect"
import type { ProviderError } from "../../domain/ProviderError"
import type { ProviderEvent } from "../../domain/ProviderEvent"
import type { GenerationRequest } from "../GenerationRequest"
import { LanguageModel } from "../LanguageModel"
import { httpProviderSettings, type ToolCallingMode } from "../providerConfig"
import { fromStreamErrorPayload, invalidResponse } from "../providerErrors"
import { joinUrl, jsonPost, sendStreaming, vendorClient } from "../providerHttp"
import { withVerbatimToolCalling } from "../verbatim/verbatimToolCalling"
import { makeGeminiDecoder } from "./geminiDecoder"
import { geminiBody } from "./geminiRequest"

/**
 * Google Gemini API: `POST {baseUrl}/v1beta/models/{model}:streamGenerateContent?alt=sse`
 * with the key in `x-goog-api-key` (never in the URL, where logs would keep it).
 */

const providerName = "google"
const defaultBaseUrl = "https://generativelanguage.googleapis.com"
const defaultApiVersion = "v1beta"

export interface GeminiOptions {
  /** `https://generativelanguage.googleapis.com` (a trailing `/v1beta` or `/v1` is accepted too). */
  readonly baseUrl?: string | undefined
  readonly toolCalling?: ToolCallingMode | undefined
  readonly apiVersion?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
  /** Merged into every request body (`safetySettings`, thinking config...). */
  readonly extraBody?: Readonly<Record<string, unknown>> | undefined
  readonly verbatimMaxBufferChars?: number | undefined
}

export const streamUrl = (baseUrl: string, apiVersion: string, model: string): string => {
  const root = /\/v1(beta|alpha)?\/?$/.test(baseUrl) ? baseUrl : joinUrl(baseUrl, apiVersion)
  const id = model.replace(/^models\//, "")
  return `${joinUrl(root, `models/${encodeURIComponent(id)}`)}:streamGenerateContent?alt=sse`
}

const make = Effect.fnUntraced(function*(options: GeminiOptions = {}) {
  const client = vendorClient(yield* HttpClient.HttpClient)
  const baseUrl = options.baseUrl ?? defaultBaseUrl
  const apiVersion = options.apiVersion ?? defaultApiVersion
  const bodyOptions = { extraBody: options.extraBody }

  const stream = (request: GenerationRequest): Stream.Stream<ProviderEvent, ProviderError> =>
    Stream.unwrap(Effect.gen(function*() {
      const httpRequest = yield* jsonPost({
        provider: providerName,
        url: streamUrl(baseUrl, apiVersion, request.model),
        headers: {
          ...options.headers,
          ...(request.apiKey === undefined ? {} : { "x-goog-api-key": Redacted.value(request.apiKey) })
        },
        body: geminiBody(request, bodyOptions)
      })
      const body = yield* sendStreaming(client, httpRequest, providerName)
      if (body._tag === "Sse") return body.decode(() => makeGeminiDecoder({ provider: providerName }))
      const value = body.value
      const payload = Array.isArray(value) ? value[0] : value
      return yield* Predicate.isObject(payload) && "error" in payload
        ? fromStreamErrorPayload(providerName, payload)
        : invalidResponse(providerName, "expected an event stream but got a JSON document")
    }))

  const model = LanguageModel.of({ name: providerName, stream })
  return options.toolCalling === "verbatim"
    ? withVerbatimToolCalling(model, { maxBufferChars: options.verbatimMaxBufferChars })
    : model
})

export const layer = (options: GeminiOptions = {}): Layer.Layer<LanguageModel, never, HttpClient.HttpClient> =>
  Layer.effect(LanguageModel, make(options))

/** Reads `LLM_BASE_URL`, `LLM_TOOL_CALLING`, `VERBATIM_TOOL_CALL_MAX_BUFFER_CHARS`. */
export const layerConfig = (options: Omit<GeminiOptions, "baseUrl" | "toolCalling"> = {}) =>
  Layer.unwrap(Effect.map(httpProviderSettings, (settings) =>
    layer({
      ...options,
      baseUrl: settings.baseUrl,
      toolCalling: settings.toolCalling,
      verbatimMaxBufferChars: settings.verbatimMaxBufferChars
    })))
