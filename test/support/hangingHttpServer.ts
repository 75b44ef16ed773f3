import { Deferred, Effect } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A loopback HTTP server that never answers: it reports each request's arrival and the moment
 * its connection is closed by the client (the proof that cancellation reached the wire).
 * Closed with the scope.
 */
export const hangingHttpServer = Effect.acquireRelease(
  Effect.gen(function*() {
    const arrived = yield* Deferred.make<void>()
    const closed = yield* Deferred.make<void>()
    const server: Server = createServer((request) => {
      Deferred.doneUnsafe(arrived, Effect.void)
      request.socket.on("close", () => Deferred.doneUnsafe(closed, Effect.void))
    })
    const port = yield* Effect.callback<number>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    })
    return { url: `http://127.0.0.1:${port}/slow`, arrived, closed, server }
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)
