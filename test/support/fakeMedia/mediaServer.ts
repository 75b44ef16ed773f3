import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

/** One request a fake media server received. */
export interface MediaRequest {
  readonly method: string
  /** Path and query. */
  readonly url: string
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
  /** Resolves when the client's socket closed (cancellation reached the wire). */
  readonly closed: Promise<void>
}

export type MediaHandler = (request: MediaRequest, response: ServerResponse) => void

export interface MediaServer {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string
  readonly requests: ReadonlyArray<MediaRequest>
  readonly close: () => Promise<void>
}

/** A loopback HTTP server that buffers each request body and hands it to `handler`. */
export const startMediaServer = (handler: MediaHandler): Promise<MediaServer> =>
  new Promise((resolve) => {
    const requests: Array<MediaRequest> = []
    const server = createServer((request, response) => {
      const chunks: Array<Buffer> = []
      const closed = new Promise<void>((done) => request.socket.once("close", () => done()))
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const recorded: MediaRequest = { method: request.method ?? "", url: request.url ?? "/", headers: request.headers, body: Buffer.concat(chunks), closed }
        requests.push(recorded)
        try {
          handler(recorded, response)
        } catch (error) {
          response.writeHead(400, { "content-type": "application/json" })
          response.end(JSON.stringify({ error: { message: error instanceof Error ? error.message : String(error) } }))
        }
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        origin: `http://127.0.0.1:${port}`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          })
      })
    })
  })

/** `startMediaServer` for the current scope. */
export const mediaServer = (handler: MediaHandler) =>
  Effect.acquireRelease(Effect.promise(() => startMediaServer(handler)), (server) => Effect.promise(() => server.close()))

export const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}
