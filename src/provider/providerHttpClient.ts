import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { Agent } from "undici"
import * as UndiciHttpClient from "./http/UndiciHttpClient"

interface ProviderHttpClientOptions {
  /** Sockets per origin at most; requests beyond wait for a free one. */
  readonly connections?: number
  /** Idle keep-alive when the server gives no `Keep-Alive: timeout` hint, milliseconds. */
  readonly keepAliveTimeoutMs?: number
  /** Upper bound on a server's keep-alive hint, milliseconds. */
  readonly keepAliveMaxTimeoutMs?: number
}

/**
 * A streaming answer holds its socket until it ends, so the cap is how many answers one vendor
 * origin can generate at once (more wait for a free socket): above the 200 channels the benches
 * and the soak keep busy. Without a cap undici's pool grew to thousands of clients under aborts.
 */
const defaultProviderConnections = 256

/**
 * The undici Agent behind the provider HttpClient: a connection cap per origin and bounded
 * keep-alive, destroyed (sockets closed) when the layer's scope closes.
 */
const providerDispatcher = (options: ProviderHttpClientOptions = {}): Layer.Layer<NodeHttpClient.Dispatcher> =>
  Layer.effect(
    NodeHttpClient.Dispatcher,
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

/** The lean undici HttpClient (UndiciHttpClient) over `providerDispatcher`: what the HTTP providers are given. */
export const providerHttpClient = (options: ProviderHttpClientOptions = {}) =>
  UndiciHttpClient.layerWithoutDispatcher.pipe(Layer.provide(providerDispatcher(options)))
