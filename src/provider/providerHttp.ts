import { Clock, Effect, Stream } from "effect"
import { HttpBody, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { ProviderError } from "../domain/ProviderError"
import { fromHttpClientError, fromStatus, invalidResponse } from "./providerErrors"
import type { Decoder } from "./decodeWith"
import * as UndiciHttpClient from "./http/UndiciHttpClient"
import { sseBytesDecoder, type SseFrame } from "./sse/Sse"
import { defaultMaxEventChars } from "./sse/SseParser"
import { decodeBody } from "./http/DecodableBody"
import { parseJsonFrame } from "./jsonFrame"

/** What a 2xx answer to a streaming request turned out to be. */
type ProviderBody =
  | {
    readonly _tag: "Sse"
    /** The body decoded by a provider's frame decoder (text, SSE framing and it in one stage). */
    readonly decode: <O, E>(make: () => Decoder<SseFrame, O, E>) => Stream.Stream<O, ProviderError | E>
  }
  /** A server that ignored `stream: true` (or answered with a JSON error) sent one JSON document. */
  | { readonly _tag: "Json"; readonly value: unknown }

/** Error bodies are read up to this many characters; a JSON fallback body up to `maxJsonChars`. */
const maxErrorBodyChars = 16_384
const maxJsonChars = 8 * 1024 * 1024

/**
 * The platform client as providers use it: no client span per request (nothing reads them, and
 * each costs a span with a dozen attributes) and never a `traceparent` / `b3` header, so our
 * trace ids never reach a vendor. The client main gives providers is like that already; wrapping
 * it would only cost two reference changes per request.
 */
export const vendorClient = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  UndiciHttpClient.isSpanFree(client)
    ? client
    : HttpClient.transform(client, (response) =>
      response.pipe(
        Effect.provideService(HttpClient.TracerPropagationEnabled, false),
        Effect.provideService(HttpClient.TracerDisabledWhen, () => true)
      ))

/** The body's text, read until it reaches `maxChars` (the rest is not read); a failed read is empty. */
const readText = (response: HttpClientResponse.HttpClientResponse, maxChars: number): Effect.Effect<string> =>
  Effect.suspend(() => {
    let text = ""
    return Stream.runForEachWhile(Stream.decodeText(response.stream), (piece) =>
      Effect.sync(() => {
        text += piece
        return text.length < maxChars
      })).pipe(
        Effect.map(() => text),
        Effect.catch(() => Effect.succeed(""))
      )
  })

/**
 * Sends a streaming request and classifies the answer: non-2xx ⇒ a typed `ProviderError`
 * (with `Retry-After`), an event stream ⇒ its frames, JSON ⇒ the parsed document, anything
 * else (an HTML error page behind a proxy) ⇒ `InvalidResponse`. Interrupting the returned
 * effect or the frame stream aborts the request and closes the socket.
 */
export const sendStreaming = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  provider: string,
  /** The longest SSE line or event read (`sseEventLimit`); longer fails the stream. */
  maxEventChars: number = defaultMaxEventChars
): Effect.Effect<ProviderBody, ProviderError> =>
  // No span is made (vendorClient), so no header is ever recorded that would need redacting.
  Effect.matchEffect(client.execute(request), {
    onFailure: (error) => Effect.fail(fromHttpClientError(provider, error)),
    onSuccess: (response) => classify(response, provider, maxEventChars)
  })

/** The usual answer, an event stream, costs no further effect; the rest read their body first. */
const classify = (
  response: HttpClientResponse.HttpClientResponse,
  provider: string,
  maxEventChars: number
): Effect.Effect<ProviderBody, ProviderError> => {
  if (response.status < 200 || response.status >= 300) return failedStatus(response, provider)
  const contentType = (response.headers["content-type"] ?? "").toLowerCase()
  if (contentType.length === 0 || contentType.includes("text/event-stream")) {
    return Effect.succeed({
      _tag: "Sse",
      decode: (make) =>
        decodeBody(
          response,
          sseBytesDecoder(make, (error) => Effect.fail(invalidResponse(provider, error.message)), { maxEventChars }),
          (error) => fromHttpClientError(provider, error)
        )
    })
  }
  return notAnEventStream(response, provider, contentType)
}

const failedStatus = Effect.fnUntraced(function*(response: HttpClientResponse.HttpClientResponse, provider: string) {
  const body = yield* readText(response, maxErrorBodyChars)
  const nowMillis = yield* Clock.currentTimeMillis
  return yield* fromStatus({ provider, status: response.status, headers: response.headers, body, nowMillis })
})

const notAnEventStream = Effect.fnUntraced(function*(
  response: HttpClientResponse.HttpClientResponse,
  provider: string,
  contentType: string
) {
  const text = yield* readText(response, contentType.includes("json") ? maxJsonChars : 600)
  if (contentType.includes("json")) {
    const parsed = parseJsonFrame(text)
    if (parsed.ok) {
      const json: ProviderBody = { _tag: "Json", value: parsed.value }
      return json
    }
    return yield* invalidResponse(provider, `a JSON response that does not parse: ${text.slice(0, 300)}`)
  }
  return yield* invalidResponse(
    provider,
    `expected an event stream but got ${contentType} (HTTP ${response.status}): ${text.slice(0, 300)}`
  )
})

/** `base` + `path` with exactly one slash between them (`http://h/v1/` + `/chat/completions`). */
export const joinUrl = (base: string, path: string): string => `${base.replace(/\/+$/, "")}/${path.replace(/^\/+/, "")}`

/** A JSON POST for a streaming endpoint; a body that cannot be encoded is a `BadRequest`. */
export const jsonPost = (options: {
  readonly provider: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}): Effect.Effect<HttpClientRequest.HttpClientRequest, ProviderError> =>
  // One effect: the request built and its body encoded at once.
  Effect.try({
    try: () =>
      HttpClientRequest.post(options.url, {
        headers: { accept: "text/event-stream", ...options.headers },
        body: HttpBody.jsonUnsafe(options.body)
      }),
    catch: (error) =>
      new ProviderError({
        reason: "BadRequest",
        provider: options.provider,
        detail: "the request body could not be encoded as JSON: JsonError",
        cause: error
      })
  })
