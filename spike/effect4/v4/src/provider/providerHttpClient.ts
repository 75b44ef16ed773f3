import { Effect, Layer } from "effect"
import { Agent } from "undici"
import * as UndiciHttpClient from "./http/UndiciHttpClient"

export interface ProviderHttpClientOptions {
  readonly connections?: number
  readonly keepAliveTimeoutMs?: number
  readonly keepAliveMaxTimeoutMs?: number
}

/** A streaming answer holds its socket until it ends: how many answers one vendor origin can generate at once. */
export const defaultProviderConnections = 256

/**
 * The undici Agent behind the provider HttpClient: a connection cap per origin and bounded
 * keep-alive, destroyed when the layer's scope closes. v3 `Layer.scoped` → v4 `Layer.effect`
 * (a layer's effect may use Scope in v4).
 */
export const providerDispatcher = (options: ProviderHttpClientOptions = {}): Layer.Layer<UndiciHttpClient.Dispatcher> =>
  Layer.effect(
    UndiciHttpClient.Dispatcher,
    Effect.acquireRelease(
      Effect.sync(() =>
        new Agent({
          connections: options.connections ?? defaultProviderConnections,
          keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
          keepAliveMaxTimeout: options.keepAliveMaxTimeoutMs ?? 60_000
        })
      ),
      (agent) => Effect.promise(() => agent.destroy())
    )
  )

/** The lean undici HttpClient over `providerDispatcher`: what the HTTP providers are given. */
export const providerHttpClient = (options: ProviderHttpClientOptions = {}) =>
  UndiciHttpClient.layerWithoutDispatcher.pipe(Layer.provide(providerDispatcher(options)))
