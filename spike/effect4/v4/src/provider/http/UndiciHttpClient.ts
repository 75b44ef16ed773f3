import { Context, Effect, Layer, Result } from "effect"
import { HttpClient, HttpClientError, type HttpClientRequest, type HttpClientResponse, Url } from "effect/http"
import type { Dispatcher as UndiciDispatcher } from "undici"
import { UndiciResponse } from "./UndiciResponse"

type DispatcherBody = Exclude<UndiciDispatcher.DispatchOptions["body"], undefined>

/**
 * The undici Dispatcher the client sends through. v3 took `NodeHttpClient.Dispatcher` from
 * @effect/platform-node; the spike declares its own so it needs no v4 platform-node (which would
 * also bring undici 8: the bench keeps the project's undici 7 on both sides).
 */
export class Dispatcher extends Context.Service<Dispatcher, UndiciDispatcher>()("loopcord/provider/http/Dispatcher") {}

const requestBody = (request: HttpClientRequest.HttpClientRequest): Effect.Effect<DispatcherBody, HttpClientError.HttpClientError> => {
  const body = request.body
  switch (body._tag) {
    case "Empty":
      return Effect.succeed(null)
    case "Uint8Array":
    case "Raw":
      return Effect.succeed(body.body as DispatcherBody)
    case "FormData":
      return Effect.succeed(body.formData as unknown as DispatcherBody)
    case "Stream":
      // Not ported (v3: NodeStream.toReadable from platform-node): no provider streams a request body.
      return Effect.fail(new HttpClientError.HttpClientError({
        reason: new HttpClientError.EncodeError({ request, description: "stream bodies are not ported in the Effect 4 spike" })
      }))
  }
}

const transportError = (request: HttpClientRequest.HttpClientRequest, cause: unknown) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })

/** One request: interrupting it before the answer aborts it (undici closes the socket). */
const send = (
  dispatcher: UndiciDispatcher,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  body: DispatcherBody
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  // v3 Effect.async → v4 Effect.callback (it offers an AbortSignal too; the controller here is the same thing, kept as in v3).
  Effect.callback((resume) => {
    const controller = new AbortController()
    dispatcher.request({
      signal: controller.signal,
      method: request.method,
      headers: request.headers,
      origin: url.origin,
      path: url.pathname + url.search + url.hash,
      body,
      // Deadlines are the caller's (Effect.timeout, the loop's alarm), never undici's.
      headersTimeout: 60 * 60 * 1000,
      bodyTimeout: 0
    }, (error, data) => resume(error === null ? Effect.succeed(new UndiciResponse(request, url.href, data)) : Effect.fail(transportError(request, error))))
    // Also destroys a body that arrived in the same tick as the interrupt.
    return Effect.sync(() => controller.abort())
  })

/**
 * The HttpClient over an undici Dispatcher, built for many short streaming calls: a request is
 * one `dispatcher.request`, a response body one Channel over the Node Readable. Like v3's, it is
 * made with `HttpClient.makeWith`, so it makes no client spans and never sends trace headers
 * (v4's `HttpClient.make` reads five references, makes a span and tracks the response per request).
 */
export const make = (dispatcher: UndiciDispatcher): HttpClient.HttpClient => {
  const client = HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
    (requestEffect) =>
      Effect.flatMap(requestEffect, (request) => {
        // v3 UrlParams.makeUrl(url, params, hash) → v4 Url.make (hash an Option on the request; an Either → a Result).
        const url = Url.make(request.url, request.urlParams, request.hash._tag === "Some" ? request.hash.value : undefined)
        if (Result.isFailure(url)) {
          return Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.InvalidUrlError({ request, cause: url.failure }) }))
        }
        return Effect.flatMap(requestBody(request), (body) => send(dispatcher, request, url.success, body))
      }),
    Effect.succeed
  )
  spanFreeClients.add(client)
  return client
}

const spanFreeClients = new WeakSet<HttpClient.HttpClient>()

/** A client made by `make` itself: it never makes spans nor sends trace headers. */
export const isSpanFree = (client: HttpClient.HttpClient): boolean => spanFreeClients.has(client)

/** The client over the Dispatcher in context. */
export const layerWithoutDispatcher: Layer.Layer<HttpClient.HttpClient, never, Dispatcher> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(Dispatcher, make)
)
