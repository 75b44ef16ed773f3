import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { assert, describe, it } from "@effect/vitest"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Cause, Duration, Effect, Exit, Fiber, Latch, Option, Stream } from "effect"
import { Agent } from "undici"
import * as UndiciHttpClient from "../../../src/provider/http/UndiciHttpClient"
import { sendStreaming } from "../../../src/provider/providerHttp"

/**
 * The lean undici client over real loopback HTTP: what it must keep of the platform client
 * (abort on interrupt, keep-alive, typed errors) and what providers rely on (bounded reads).
 */

interface Server {
  readonly url: string
  /** Sockets accepted so far, with the time each closed (performance.now()), if it did. */
  readonly sockets: Array<{ closedAt: number | undefined }>
  /** Resolves with the n-th request (0-based) once its headers arrived. */
  readonly request: (index: number) => Promise<IncomingMessage>
}

/** A loopback server answering with `handler`; closed (all sockets destroyed) with the scope. */
const server = (handler: (req: IncomingMessage, res: ServerResponse) => void) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const sockets: Array<{ closedAt: number | undefined }> = []
      const requests: Array<IncomingMessage> = []
      const waiting: Array<() => void> = []
      const http = createServer((req, res) => {
        requests.push(req)
        for (const wake of waiting.splice(0)) wake()
        handler(req, res)
      })
      http.on("connection", (socket: Socket) => {
        const entry = { closedAt: undefined as number | undefined }
        sockets.push(entry)
        socket.on("close", () => (entry.closedAt = performance.now()))
      })
      await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
      const request = async (index: number): Promise<IncomingMessage> => {
        while (requests[index] === undefined) await new Promise<void>((resolve) => waiting.push(resolve))
        return requests[index]!
      }
      return { http, server: { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`, sockets, request } }
    }),
    ({ http }) =>
      Effect.promise(() => {
        http.closeAllConnections()
        return new Promise<void>((resolve) => http.close(() => resolve()))
      })
  ).pipe(Effect.map(({ server }): Server => server))

/** An event stream that sends one event and then nothing, never ending. */
const firstEventOnly = (_: IncomingMessage, res: ServerResponse) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  res.write("data: first\n\n")
}

const client = Effect.acquireRelease(Effect.sync(() => new Agent({ connections: 4 })), (agent) => Effect.promise(() => agent.destroy())).pipe(
  Effect.map(UndiciHttpClient.make)
)

/** Waits (real time) until the socket closed; how long after `since` it did, in ms. */
const closedWithin = (socket: { closedAt: number | undefined }, since: number) =>
  Effect.gen(function*() {
    const started = performance.now()
    while (socket.closedAt === undefined) {
      if (performance.now() - started > 2_000) return Number.POSITIVE_INFINITY
      yield* Effect.sleep(Duration.millis(2))
    }
    return socket.closedAt - since
  })

const post = (url: string) => HttpClientRequest.post(url).pipe(HttpClientRequest.bodyText("{}", "application/json"))

describe("UndiciHttpClient: the providers' HttpClient over real loopback HTTP", () => {
  it.live("interrupting a request still waiting for its answer closes the socket within 50 ms", () =>
    Effect.gen(function*() {
      const srv = yield* server(() => {/* never answers */})
      const http = yield* client
      const fiber = yield* Effect.forkChild(http.execute(post(srv.url)))
      yield* Effect.promise(() => srv.request(0))
      const interruptedAt = performance.now()
      yield* Fiber.interrupt(fiber)
      assert.isBelow(yield* closedWithin(srv.sockets[0]!, interruptedAt), 50)
    }))

  it.live("interrupting the body stream mid-body closes the socket within 50 ms", () =>
    Effect.gen(function*() {
      const srv = yield* server(firstEventOnly)
      const http = yield* client
      const response = yield* http.execute(post(srv.url))
      const first = yield* Latch.make(false)
      const fiber = yield* response.stream.pipe(Stream.runForEach(() => first.open), Effect.forkChild)
      yield* first.await
      const interruptedAt = performance.now()
      yield* Fiber.interrupt(fiber)
      assert.isBelow(yield* closedWithin(srv.sockets[0]!, interruptedAt), 50)
    }))

  it.live("a consumer that stops early (take) aborts the rest of the body and closes the socket", () =>
    Effect.gen(function*() {
      const srv = yield* server(firstEventOnly)
      const http = yield* client
      const response = yield* http.execute(post(srv.url))
      const taken = yield* Stream.runCollect(Stream.take(response.stream, 1))
      const stoppedAt = performance.now()
      assert.strictEqual(new TextDecoder().decode(taken[0]), "data: first\n\n")
      assert.isBelow(yield* closedWithin(srv.sockets[0]!, stoppedAt), 50)
    }))

  it.live("text and json of one response read its body once and both answer", () =>
    Effect.gen(function*() {
      const srv = yield* server((_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ a: "1" }))
      })
      const http = yield* client
      const response = yield* http.execute(post(srv.url))
      const [text, json, again] = yield* Effect.all([response.text, response.json, response.text])
      assert.strictEqual(text, "{\"a\":\"1\"}")
      assert.deepStrictEqual(json, { a: "1" })
      assert.strictEqual(again, text)
    }))

  it.live("interrupting a whole-body read destroys the body and closes the socket within 50 ms", () =>
    Effect.gen(function*() {
      const srv = yield* server((_, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.write("never ends")
      })
      const http = yield* client
      const response = yield* http.execute(post(srv.url))
      const fiber = yield* Effect.forkChild(response.text)
      yield* Effect.sleep(Duration.millis(20))
      const interruptedAt = performance.now()
      yield* Fiber.interrupt(fiber)
      assert.isBelow(yield* closedWithin(srv.sockets[0]!, interruptedAt), 50)
    }))

  it.live("a body read to its end leaves the socket open for the next request (keep-alive)", () =>
    Effect.gen(function*() {
      const srv = yield* server((_, res) => {
        res.writeHead(200, { "content-type": "text/plain" })
        res.end("whole body")
      })
      const http = yield* client
      for (let round = 0; round < 5; round += 1) {
        const response = yield* http.execute(post(srv.url))
        const bytes = yield* Stream.runCollect(response.stream)
        assert.strictEqual(bytes.map((piece) => new TextDecoder().decode(piece)).join(""), "whole body")
      }
      // undici's pool may open a second socket for the request right after the first (the
      // platform client does the same); a body destroyed at its end would cost one per request.
      assert.isAtMost(srv.sockets.length, 2)
      for (const socket of srv.sockets) assert.isUndefined(socket.closedAt)
    }))

  it.live("a consumer that stops after the whole body arrived keeps the socket for the next request", () =>
    Effect.gen(function*() {
      const srv = yield* server((_, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.end("data: first\n\ndata: [DONE]\n\n")
      })
      const http = yield* client
      for (let round = 0; round < 5; round += 1) {
        const response = yield* http.execute(post(srv.url))
        // Give the whole answer time to arrive before the consumer stops reading it.
        yield* Effect.sleep(Duration.millis(5))
        yield* Stream.runDrain(Stream.take(response.stream, 1))
      }
      assert.isAtMost(srv.sockets.length, 2)
      for (const socket of srv.sockets) assert.isUndefined(socket.closedAt)
    }))

  it.live("an error body larger than the bound is read only up to it, and its socket closes", () =>
    Effect.gen(function*() {
      let timer: NodeJS.Timeout | undefined
      const srv = yield* server((_, res) => {
        res.writeHead(500, { "content-type": "text/plain" })
        // An endless body: reading it whole would never finish.
        timer = setInterval(() => res.write("x".repeat(4096)), 1)
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => clearInterval(timer)))
      const http = yield* client
      const error = yield* Effect.flip(sendStreaming(http, post(srv.url), "test"))
      assert.strictEqual(error.reason, "Server")
      assert.strictEqual(error.status, 500)
      assert.include(error.detail, "xxxx")
      assert.isBelow(yield* closedWithin(srv.sockets[0]!, performance.now()), 50)
    }))

  it.live("a non-2xx answer reaches the caller with its status and headers (429 + Retry-After ⇒ RateLimit)", () =>
    Effect.gen(function*() {
      const srv = yield* server((_, res) => {
        res.writeHead(429, { "content-type": "application/json", "Retry-After": "7", "x-repeated": ["a", "b"] })
        res.end(JSON.stringify({ error: { message: "slow down" } }))
      })
      const http = yield* client
      const response = yield* http.execute(post(srv.url))
      assert.strictEqual(response.status, 429)
      assert.strictEqual(response.headers["retry-after"], "7")
      assert.strictEqual(response.headers["x-repeated"], "a, b", "a repeated header is joined, as the platform's Headers are")
      assert.deepStrictEqual(yield* response.json, { error: { message: "slow down" } })
      const error = yield* Effect.flip(sendStreaming(http, post(srv.url), "test"))
      assert.strictEqual(error.reason, "RateLimit")
      assert.strictEqual(error.detail, "slow down")
      assert.strictEqual(Duration.toMillis(error.retryAfter!), 7_000)
    }))

  it.live("a refused connection is an HttpClientError of reason TransportError (a Network ProviderError)", () =>
    Effect.gen(function*() {
      const srv = yield* server(() => {})
      const url = srv.url
      // Nothing listens on the port once the server is gone.
      const refusedUrl = yield* Effect.promise(async () => {
        const probe = createServer()
        await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
        const port = (probe.address() as AddressInfo).port
        await new Promise<void>((resolve) => probe.close(() => resolve()))
        return `http://127.0.0.1:${port}`
      })
      assert.notStrictEqual(refusedUrl, url)
      const http = yield* client
      const error = yield* Effect.flip(http.execute(post(refusedUrl)))
      assert.strictEqual(error._tag, "HttpClientError")
      assert.strictEqual(error.reason._tag, "TransportError")
      const providerError = yield* Effect.flip(sendStreaming(http, post(refusedUrl), "test"))
      assert.strictEqual(providerError.reason, "Network")
    }))

  it.live("a connection dropped mid-body fails the stream with an HttpClientError (DecodeError)", () =>
    Effect.gen(function*() {
      const srv = yield* server((_, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" })
        res.write("data: first\n\n", () => setTimeout(() => res.socket?.destroy(), 10))
      })
      const http = yield* client
      const response = yield* http.execute(post(srv.url))
      const exit = yield* Effect.exit(Stream.runDrain(response.stream))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) {
        const failure = Option.getOrUndefined(Cause.findErrorOption(exit.cause))
        assert.strictEqual(failure?._tag, "HttpClientError")
        assert.strictEqual(failure?.reason._tag, "DecodeError")
      }
    }))

  it.effect("makes no client span and sends no trace header: vendorClient needs no wrapping", () =>
    Effect.sync(() => {
      const http = UndiciHttpClient.make(new Agent())
      assert.isTrue(UndiciHttpClient.isSpanFree(http))
      assert.isFalse(UndiciHttpClient.isSpanFree(HttpClient.mapRequest(http, (request) => request)))
    }))
})
