import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

export interface RecordedRequest {
  readonly method: string
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

export interface PageServer {
  readonly port: number
  readonly origin: string
  /** TCP connections accepted so far. */
  readonly connections: () => number
  readonly requests: ReadonlyArray<RecordedRequest>
}

export type Handler = (request: IncomingMessage, response: ServerResponse, body: string) => void

/**
 * A loopback HTTP server for one test (scoped: closed, connections destroyed, at scope end).
 * Counts connections so a test can prove no byte reached a refused target.
 */
export const pageServer = (handler: Handler, host = "127.0.0.1") =>
  Effect.acquireRelease(
    Effect.callback<{ server: ReturnType<typeof createServer>; state: PageServer }>((resume) => {
      let connections = 0
      const requests: Array<RecordedRequest> = []
      const server = createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const body = Buffer.concat(chunks).toString("utf8")
          requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body })
          handler(request, response, body)
        })
      })
      server.on("connection", () => {
        connections += 1
      })
      server.listen(0, host, () => {
        const port = (server.address() as AddressInfo).port
        const shown = host.includes(":") ? `[${host}]` : host
        resume(
          Effect.succeed({
            server,
            state: { port, origin: `http://${shown}:${port}`, connections: () => connections, requests }
          })
        )
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ state }) => state))
