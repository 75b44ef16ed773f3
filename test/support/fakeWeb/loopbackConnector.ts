import { isIP } from "node:net"
import { Layer } from "effect"
import { buildConnector } from "undici"
import { SocketConnector } from "../../../src/fetch/SocketConnector"

export interface ConnectAttempt {
  readonly address: string
  readonly port: string
  readonly host: string | undefined
}

/** Loopback: 127.0.0.0/8 and ::1 only. */
export const isLoopbackAddress = (address: string): boolean =>
  (isIP(address) === 4 && address.startsWith("127.")) || address === "::1"

/**
 * A SocketConnector for tests: it refuses every non-loopback address before a socket exists,
 * whatever the code under test decided, and logs every attempt. `translate` maps pretend-public
 * addresses (what the fake DNS answers) to a loopback address, so production-mode tests can talk
 * to a "public" site that is really a loopback server.
 */
export const loopbackConnector = (
  translate: Readonly<Record<string, string>> = {},
  /** Extra trust for loopback TLS servers with a test certificate. */
  tls: { readonly ca?: string } = {}
) => {
  const attempts: Array<ConnectAttempt> = []
  const refused: Array<ConnectAttempt> = []
  const base = buildConnector({ timeout: 5_000, ...(tls.ca === undefined ? {} : { ca: tls.ca }) })
  const connect: buildConnector.connector = (request, callback) => {
    const attempt = { address: request.hostname, port: request.port, host: request.host }
    attempts.push(attempt)
    const target = translate[request.hostname] ?? request.hostname
    if (!isLoopbackAddress(target)) {
      refused.push(attempt)
      callback(new Error(`test connector: refused non-loopback address ${request.hostname}`), null)
      return
    }
    base({ ...request, hostname: target }, callback)
  }
  return {
    connect,
    layer: Layer.succeed(SocketConnector, { connect }),
    attempts,
    refused
  }
}
