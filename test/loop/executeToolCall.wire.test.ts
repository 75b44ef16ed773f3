import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { toolSuccess } from "../../src/domain/ToolResult"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { ToolContext } from "../../src/tools/ToolContext"
import { ToolError } from "../../src/tools/ToolError"
import { rawTool } from "../support/tools/testTools"
import { functionCallPass, makeToolCallHarness, testAttempt } from "../support/tools/toolCallHarness"

/**
 * A loopback HTTP server that never answers: it reports each request's arrival and the moment
 * its connection is closed by the client (the proof that cancellation reached the wire).
 */
const hangingServer = Effect.acquireRelease(
  Effect.gen(function*() {
    const arrived = yield* Deferred.make<void>()
    const closed = yield* Deferred.make<void>()
    const server: Server = createServer((request) => {
      Deferred.unsafeDone(arrived, Effect.void)
      request.socket.on("close", () => Deferred.unsafeDone(closed, Effect.void))
    })
    const port = yield* Effect.async<number>((resume) => {
      server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as AddressInfo).port)))
    })
    return { url: `http://127.0.0.1:${port}/slow`, arrived, closed, server }
  }),
  ({ server }) =>
    Effect.async<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
)

describe("executeToolCall: /kill cancels a promise-based tool on the wire (design decision 10)", () => {
  it.live("a fetch given ToolContext.abortSignal is aborted when the turn is killed: the server sees the connection close", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* hangingServer
      // Deliberately a plain promise: only the AbortSignal can cancel it, not fiber interruption.
      const fetcher = rawTool({
        name: "fetch_slow",
        execute: () =>
          Effect.flatMap(ToolContext, (context) =>
            Effect.tryPromise({
              try: () => fetch(server.url, { signal: context.abortSignal }),
              catch: (cause) => new ToolError({ tool: "fetch_slow", error: String(cause) })
            })).pipe(Effect.as(toolSuccess()))
      })
      const h = yield* makeToolCallHarness({ tools: [fetcher] })
      const fiber = yield* Effect.fork(h.run(executeToolCall({ pass: functionCallPass({ name: "fetch_slow" }), iteration: 0, attempt: testAttempt })))
      yield* Deferred.await(server.arrived)
      yield* h.signals.kill({ requesterId: "user-1" })
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "stopped_by_user")
      // The request was cancelled at the socket, not left running in the background.
      yield* Deferred.await(server.closed).pipe(Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("the connection was never closed") }))
    })))
})
