import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { executeToolCall } from "../../src/loop/executeToolCall"
import { ToolContext } from "../../src/tools/ToolContext"
import { ToolError } from "../../src/tools/ToolError"
import { rawTool } from "../support/tools/testTools"
import { callInput, makeToolCallHarness, testAttempt } from "../support/tools/toolCallHarness"
import { hangingHttpServer } from "../support/hangingHttpServer"


describe("executeToolCall: /kill cancels a promise-based tool on the wire (design decision 10)", () => {
  it.live("a fetch given ToolContext.abortSignal is aborted when the turn is killed: the server sees the connection close", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* hangingHttpServer
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
      const fiber = yield* Effect.forkChild(h.run(executeToolCall({ ...callInput({ name: "fetch_slow" }), iteration: 0, attempt: testAttempt })))
      yield* Deferred.await(server.arrived)
      yield* h.signals.kill({ requesterId: "user-1" })
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome._tag === "Abort" ? outcome.status : outcome._tag, "stopped_by_user")
      // The request was cancelled at the socket, not left running in the background.
      yield* Deferred.await(server.closed).pipe(Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new Error("the connection was never closed")) }))
    })))
})
