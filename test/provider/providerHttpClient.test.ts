import { assert, describe, it } from "@effect/vitest"
import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Context, Duration, Effect, Exit, Fiber, Layer, Scope } from "effect"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { LanguageModel } from "../../src/provider/LanguageModel"
import { providerHttpClient } from "../../src/provider/providerHttpClient"
import { finishChunk, openAiTranscript, textChunk } from "../support/fakeProviders/openAiCompatible"
import { collect, request } from "./harness"

/** A loopback chat-completions server that holds every answer until released and counts sockets. */
const holdingServer = Effect.acquireRelease(
  Effect.promise(async () => {
    const sockets = new Set<Socket>()
    let accepted = 0
    const held: Array<ServerResponse> = []
    let released = false
    const answer = (res: ServerResponse) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.end(openAiTranscript([textChunk("ok"), finishChunk("stop")]))
    }
    const server = createServer((req, res) => {
      req.resume()
      req.on("end", () => (released ? answer(res) : held.push(res)))
    })
    server.on("connection", (socket: Socket) => {
      accepted += 1
      sockets.add(socket)
      socket.on("close", () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as AddressInfo).port
    return {
      url: `http://127.0.0.1:${port}/v1`,
      server,
      accepted: () => accepted,
      open: () => sockets.size,
      held: () => held.length,
      release: () => {
        released = true
        for (const res of held.splice(0)) answer(res)
      }
    }
  }),
  ({ server }) =>
    Effect.promise(() => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    })
)

/** Polls a condition in real time (loopback I/O), failing clearly after `ms`. */
const until = (condition: () => boolean, what: string, ms = 5_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (!condition()) {
      if (Date.now() - started > ms) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
    }
  })

describe("providerHttpClient: the undici Agent behind the providers", () => {
  it.live("caps the sockets per origin: requests beyond the cap wait for a free one", () =>
    Effect.gen(function*() {
      const server = yield* holdingServer
      const context = yield* Layer.build(
        OpenAiCompatible.layer({ baseUrl: server.url }).pipe(Layer.provide(providerHttpClient({ connections: 2 })))
      )
      const model = Context.get(context, LanguageModel)
      const calls = yield* Effect.forkChild(Effect.all(Array.from({ length: 5 }, () => collect(model, request())), { concurrency: "unbounded" }))
      yield* until(() => server.held() === 2, "two requests to arrive")
      // Give a third socket every chance to open before looking.
      yield* Effect.sleep(Duration.millis(100))
      assert.strictEqual(server.accepted(), 2)
      assert.strictEqual(server.held(), 2)
      server.release()
      const results = yield* Fiber.join(calls)
      assert.deepStrictEqual(results.map((result) => result.text), ["ok", "ok", "ok", "ok", "ok"])
      assert.strictEqual(server.accepted(), 2, "the queued requests reused the two sockets")
    }))

  it.live("closing the layer's scope closes the kept-alive sockets", () =>
    Effect.gen(function*() {
      const server = yield* holdingServer
      server.release()
      const scope = yield* Scope.make()
      const context = yield* Layer.buildWithScope(
        OpenAiCompatible.layer({ baseUrl: server.url }).pipe(Layer.provide(providerHttpClient())),
        scope
      )
      const result = yield* collect(Context.get(context, LanguageModel), request())
      assert.strictEqual(result.text, "ok")
      assert.strictEqual(server.open(), 1, "the socket is kept alive after the answer")
      yield* Scope.close(scope, Exit.void)
      yield* until(() => server.open() === 0, "the kept-alive socket to close")
    }))
})
