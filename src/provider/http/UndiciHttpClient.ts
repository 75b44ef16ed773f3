import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Layer, Result } from "effect"
import { HttpClient, HttpClientError, type HttpClientRequest, type HttpClientResponse, Url } from "effect/http"
import type { Dispatcher } from "undici"
import { UndiciResponse } from "./UndiciResponse"

type DispatcherBody = Exclude<Dispatcher.DispatchOptions["body"], undefined>

const requestBody = (body: HttpClientRequest.HttpClientRequest["body"]): Effect.Effect<DispatcherBody> => {
  switch (body._tag) {
    case "Empty":
      return Effect.succeed(null)
    case "Uint8Array":
    case "Raw":
      return Effect.succeed(body.body as DispatcherBody)
    case "FormData":
      return Effect.succeed(body.formData as unknown as DispatcherBody)
    case "Stream":
      return NodeStream.toReadable(body.stream)
  }
}

const transportError = (request: HttpClientRequest.HttpClientRequest, cause: unknown) =>
  new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, cause }) })

/** One request: interrupting it before the answer aborts it (undici closes the socket). */
const send = (
  dispatcher: Dispatcher,
  request: HttpClientRequest.HttpClientRequest,
  url: URL,
  body: DispatcherBody
): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
  Effect.callback((resume) => {
    const controller = new AbortController()
    dispatcher.request({
      signal: controller.signal,
      method: request.method,
      headers: request.headers,
      origin: url.origin,
      path: url.pathname + url.search + url.hash,
      body,
      // Deadlines are the caller's (Effect.timeout, the loop's watchdogs), never undici's.
      headersTimeout: 60 * 60 * 1000,
      bodyTimeout: 0
    }, (error, data) => resume(error === null ? Effect.succeed(new UndiciResponse(request, url.href, data)) : Effect.fail(transportError(request, error))))
    // Also destroys a body that arrived in the same tick as the interrupt.
    return Effect.sync(() => controller.abort())
  })

/**
 * The HttpClient over an undici Dispatcher, built for many short streaming calls: a request is
 * one `dispatcher.request`, a response body one Channel over the Node Readable
 * (readableChannel). It is made with `HttpClient.makeWith`, so unlike `NodeHttpClient.layerUndici`
 * it makes no client spans, never sends trace headers (what `vendorClient` asks of any client)
 * and does not track each response, so a request costs no span, no reference lookups and no
 * extra stream stages. Per-request undici options from the fiber's context (the platform
 * client's escape hatch) are not read: nothing here sets them.
 */
export const make = (dispatcher: Dispatcher): HttpClient.HttpClient => {
  const client = HttpClient.makeWith<never, never, HttpClientError.HttpClientError, never>(
    (requestEffect) =>
      Effect.flatMap(requestEffect, (request) => {
        const url = Url.make(request.url, request.urlParams, request.hash._tag === "Some" ? request.hash.value : undefined)
        if (Result.isFailure(url)) {
          return Effect.fail(new HttpClientError.HttpClientError({ reason: new HttpClientError.InvalidUrlError({ request, cause: url.failure }) }))
        }
        return Effect.flatMap(requestBody(request.body), (body) => send(dispatcher, request, url.success, body))
      }),
    Effect.succeed
  )
  spanFreeClients.add(client)
  return client
}

const spanFreeClients = new WeakSet<HttpClient.HttpClient>()

/** A client made by `make` itself: it never makes spans nor sends trace headers, so it needs no wrapping to ensure that. */
export const isSpanFree = (client: HttpClient.HttpClient): boolean => spanFreeClients.has(client)

/** The client over the `NodeHttpClient.Dispatcher` in context. */
export const layerWithoutDispatcher: Layer.Layer<HttpClient.HttpClient, never, NodeHttpClient.Dispatcher> = Layer.effect(
  HttpClient.HttpClient,
  Effect.map(NodeHttpClient.Dispatcher, make)
)
