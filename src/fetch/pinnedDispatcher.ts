import { Agent } from "undici"
import { normalizeHost } from "./AddressPolicy"
import type { SocketConnectorShape } from "./SocketConnector"

/** A pinned dispatcher was asked to connect to a host other than the one it was validated for. */
class PinnedHostMismatchError extends Error {
  constructor(readonly expected: string, readonly actual: string) {
    super(`Pinned connection for ${expected} refused a connection to ${actual}`)
    this.name = "PinnedHostMismatchError"
  }
}

/** What a connection is pinned to: a host and the addresses the policy accepted for it. */
interface Pin {
  readonly host: string
  readonly addresses: ReadonlyArray<{ readonly address: string }>
}

/**
 * An undici Agent that connects to `target`'s validated addresses only, in order, never
 * re-resolving the name (DNS pinning: docs/architecture.md, fetch_url and safe_http). IP-literal
 * hosts take the same path, so no connection bypasses the policy. A ValidatedTarget is a Pin.
 * Pooled sockets stay pinned: the Agent can only ever have connected to these addresses.
 */
export const makePinnedDispatcher = (
  target: Pin,
  connector: SocketConnectorShape,
  options: { readonly bodyTimeoutMs?: number; readonly headersTimeoutMs?: number } = {}
): Agent =>
  new Agent({
    // Our Clock-driven deadline governs; undici's own timers only backstop long-lived streams.
    bodyTimeout: options.bodyTimeoutMs ?? 0,
    headersTimeout: options.headersTimeoutMs ?? 0,
    connections: 4,
    connect: (request, callback) => {
      const asked = normalizeHost(request.hostname)
      if (asked !== target.host) {
        callback(new PinnedHostMismatchError(target.host, asked), null)
        return
      }
      const attempt = (index: number): void => {
        const pinned = target.addresses[index]
        if (pinned === undefined) {
          callback(new Error(`No pinned address for ${target.host}`), null)
          return
        }
        connector.connect({ ...request, hostname: pinned.address }, (...result) => {
          if (result[0] !== null && index + 1 < target.addresses.length) {
            attempt(index + 1)
          } else {
            callback(...result)
          }
        })
      }
      attempt(0)
    }
  })
