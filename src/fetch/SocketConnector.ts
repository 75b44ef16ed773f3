import { Context, Layer } from "effect"
import { buildConnector } from "undici"

/**
 * Opens the TCP/TLS socket for an already-pinned address (undici's connector contract). The
 * pinned dispatcher hands it the validated IP as `hostname` and keeps `host` (so TLS SNI and
 * certificate checks use the original name). Swappable so tests can refuse every non-loopback
 * address before a packet leaves, whatever the policy under test decided.
 */
export interface SocketConnectorShape {
  readonly connect: buildConnector.connector
}

export class SocketConnector extends Context.Service<SocketConnector, SocketConnectorShape>()("loopcord/fetch/SocketConnector") {
  /** undici's own connector (10 s connect timeout, TLS session cache). */
  static readonly system: Layer.Layer<SocketConnector> = Layer.sync(SocketConnector, () => ({
    connect: buildConnector({ timeout: 10_000 })
  }))
}
