import { gzipSync } from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Duration, Effect, Result, Exit, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { ResponseSizeError } from "../../src/fetch/ResponseSizeError"
import { SafeHttp, SafeHttpError, type SafeHttpRequest } from "../../src/fetch/SafeHttp"
import { pageServer } from "../support/fakeWeb/pageServer"
import { webStack, type WebKitOptions } from "../support/fakeWeb/webTestKit"

/** The cause's error when the cause is that one failure and nothing else. */
const onlyFailure = <E>(cause: Cause.Cause<E>): E | undefined => {
  const [reason, ...rest] = cause.reasons
  return rest.length === 0 && reason !== undefined && reason._tag === "Fail" ? reason.error : undefined
}

const MIB = 1024 * 1024

const request = (options: WebKitOptions, input: SafeHttpRequest) =>
  Effect.flatMap(SafeHttp, (http) => http.request(input)).pipe(Effect.provide(webStack(options).layer))

const dev: WebKitOptions = { production: false }

/**
 * SafeHttp built once for the test's scope, as production keeps it: closing a fresh layer after
 * each request would tear its pool down and hide a socket the request itself left open.
 */
const keptAlive = (options: WebKitOptions) =>
  Effect.flatMap(Layer.build(webStack(options).layer), (context) => Effect.provide(SafeHttp, context))

/** Resolves when the server saw the response torn down (the client closed the socket). */
const closedSignal = () => {
  let resolveClosed: () => void = () => undefined
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve
  })
  return { closed, markClosed: () => resolveClosed() }
}

const within = <A>(promise: Promise<A>, ms: number) =>
  Effect.promise(() =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))])
  )

describe("SafeHttp", () => {
  it.effect("a declared oversized body stops at the cap and the download is torn down", () =>
    Effect.gen(function* () {
      const { closed, markClosed } = closedSignal()
      let written = 0
      const server = yield* pageServer((_request, response) => {
        response.on("close", markClosed)
        response.writeHead(200, { "content-type": "text/plain", "content-length": String(64 * MIB) })
        const chunk = Buffer.alloc(64 * 1024, 98)
        const pump = () => {
          while (written < 64 * MIB && !response.destroyed) {
            written += chunk.length
            if (!response.write(chunk)) return void response.once("drain", pump)
          }
        }
        pump()
      })
      const result = yield* Effect.result(request({ ...dev, settings: { maxBodyBytes: MIB } }, { url: `${server.origin}/` }))
      assert.isTrue(Result.isFailure(result) && result.failure instanceof ResponseSizeError)
      assert.isTrue(yield* within(closed, 5_000))
      assert.isBelow(written, 64 * MIB)
    })
  )

  it.effect("a long-lived SafeHttp (as in production) closes the oversized download's socket and keeps serving", () =>
    Effect.gen(function* () {
      // One layer for every request: only the body reader's cancel can close the socket here,
      // the pool is not torn down between requests (its idle timer runs on the TestClock).
      const { closed, markClosed } = closedSignal()
      const paths: Array<string> = []
      const server = yield* pageServer((incoming, response) => {
        paths.push(incoming.url ?? "")
        if (incoming.url === "/big") {
          incoming.socket.on("close", markClosed)
          response.writeHead(200, { "content-type": "text/plain", "content-length": String(64 * MIB) })
          const chunk = Buffer.alloc(64 * 1024, 97)
          const pump = () => {
            while (!response.destroyed) if (!response.write(chunk)) return void response.once("drain", pump)
          }
          pump()
          return
        }
        response.writeHead(200, { "content-type": "text/plain" })
        response.end(`ok ${incoming.url ?? ""}`)
      })
      const http = yield* keptAlive({ ...dev, settings: { maxBodyBytes: MIB } })
      const warm = yield* http.request({ url: `${server.origin}/first` })
      assert.strictEqual(Buffer.from(warm.body).toString(), "ok /first")
      const big = yield* Effect.result(http.request({ url: `${server.origin}/big` }))
      assert.isTrue(Result.isFailure(big) && big.failure instanceof ResponseSizeError)
      assert.isTrue(yield* within(closed, 5_000), "the oversized download's socket was closed")
      const after = yield* http.request({ url: `${server.origin}/after` })
      assert.strictEqual(Buffer.from(after.body).toString(), "ok /after")
      assert.deepStrictEqual(paths, ["/first", "/big", "/after"])
    })
  )

  it.effect("an endless chunked body stops at the cap", () =>
    Effect.gen(function* () {
      const { closed, markClosed } = closedSignal()
      const server = yield* pageServer((_request, response) => {
        response.on("close", markClosed)
        response.writeHead(200, { "content-type": "text/html" })
        const chunk = Buffer.alloc(16 * 1024, 99)
        const pump = () => {
          while (!response.destroyed) if (!response.write(chunk)) return void response.once("drain", pump)
        }
        pump()
      })
      const http = yield* keptAlive({ ...dev, settings: { maxBodyBytes: 256 * 1024 } })
      const result = yield* Effect.result(http.request({ url: `${server.origin}/` }))
      assert.isTrue(Result.isFailure(result) && result.failure instanceof ResponseSizeError)
      if (Result.isFailure(result)) assert.include(result.failure.message, "exceeds the maximum allowed size (0.25 MB)")
      assert.isTrue(yield* within(closed, 5_000), "closed while the service lives on")
    })
  )

  it.effect("a decompression bomb is counted after decompression and stops at the cap", () =>
    Effect.gen(function* () {
      const bomb = gzipSync(Buffer.alloc(32 * MIB, 0))
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip", "content-length": String(bomb.length) })
        response.end(bomb)
      })
      assert.isBelow(bomb.length, MIB)
      const result = yield* Effect.result(request({ ...dev, settings: { maxBodyBytes: 2 * MIB } }, { url: `${server.origin}/` }))
      assert.isTrue(Result.isFailure(result) && result.failure instanceof ResponseSizeError)
      const small = gzipSync(Buffer.from("hello gzip"))
      const ok = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" })
        response.end(small)
      })
      const decoded = yield* request(dev, { url: `${ok.origin}/` })
      assert.strictEqual(Buffer.from(decoded.body).toString(), "hello gzip")
    })
  )

  it.effect("a slow-drip body fails at FETCH_URL_TIMEOUT_MS on the Clock and the socket closes", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const started = yield* Deferred.make<void>()
        const { closed, markClosed } = closedSignal()
        const server = yield* pageServer((_request, response) => {
          response.on("close", markClosed)
          response.writeHead(200, { "content-type": "text/plain" })
          response.write("a")
          Deferred.doneUnsafe(started, Exit.void)
          const drip = setInterval(() => (response.destroyed ? clearInterval(drip) : response.write("a")), 20)
        })
        const fiber = yield* Effect.forkChild(
          request({ ...dev, settings: { timeout: Duration.millis(15_000) } }, { url: `${server.origin}/` })
        )
        yield* Deferred.await(started)
        yield* TestClock.adjust(Duration.millis(14_999))
        assert.isUndefined(fiber.pollUnsafe())
        yield* TestClock.adjust(Duration.millis(1))
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) {
          const failure = onlyFailure(exit.cause)
          assert.instanceOf(failure, SafeHttpError)
          assert.strictEqual((failure as SafeHttpError).code, "TIMEOUT")
          assert.include((failure as SafeHttpError).message, "15000 ms")
        }
        assert.isTrue(yield* within(closed, 5_000))
      })
    )
  )

  it.effect("headers that never come fail at the deadline too (TestClock)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const arrived = yield* Deferred.make<void>()
        const server = yield* pageServer(() => Deferred.doneUnsafe(arrived, Exit.void))
        const fiber = yield* Effect.forkChild(request(dev, { url: `${server.origin}/`, timeout: Duration.seconds(2) }))
        yield* Deferred.await(arrived)
        yield* TestClock.adjust(Duration.seconds(2))
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit) && (onlyFailure(exit.cause) as SafeHttpError | undefined)?.code === "TIMEOUT")
      })
    )
  )

  it.effect("interruption (kill, tool timeout) closes the socket", () =>
    Effect.gen(function* () {
      const arrived = yield* Deferred.make<void>()
      const { closed, markClosed } = closedSignal()
      const server = yield* pageServer((incoming) => {
        incoming.socket.on("close", markClosed)
        Deferred.doneUnsafe(arrived, Exit.void)
      })
      const fiber = yield* Effect.forkChild(request(dev, { url: `${server.origin}/` }))
      yield* Deferred.await(arrived)
      yield* Fiber.interrupt(fiber)
      assert.isTrue(yield* within(closed, 5_000))
    })
  )

  it.effect("the ToolContext abort signal cancels the request on the wire", () =>
    Effect.gen(function* () {
      const arrived = yield* Deferred.make<void>()
      const { closed, markClosed } = closedSignal()
      const server = yield* pageServer((incoming) => {
        incoming.socket.on("close", markClosed)
        Deferred.doneUnsafe(arrived, Exit.void)
      })
      const controller = new AbortController()
      const fiber = yield* Effect.forkChild(Effect.result(request(dev, { url: `${server.origin}/`, signal: controller.signal })))
      yield* Deferred.await(arrived)
      controller.abort()
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure instanceof SafeHttpError && result.failure.code === "ABORTED")
      assert.isTrue(yield* within(closed, 5_000))
    })
  )

  it.effect("303, and 301/302 after POST, continue as GET without the body; 307 keeps method and body", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((incoming, response) => {
        const status = /^\/(\d{3})$/.exec(incoming.url ?? "")?.[1]
        if (status !== undefined) {
          response.writeHead(Number(status), { location: "/landing" })
          response.end()
          return
        }
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ method: incoming.method, type: incoming.headers["content-type"] ?? null }))
      })
      const post = (status: number) =>
        request(dev, { url: `${server.origin}/${status}`, method: "POST", body: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } }).pipe(
          Effect.map((response) => JSON.parse(Buffer.from(response.body).toString()) as { method: string; type: string | null })
        )
      assert.deepStrictEqual(yield* post(303), { method: "GET", type: null })
      assert.deepStrictEqual(yield* post(301), { method: "GET", type: null })
      assert.deepStrictEqual(yield* post(302), { method: "GET", type: null })
      assert.deepStrictEqual(yield* post(307), { method: "POST", type: "application/x-www-form-urlencoded" })
      assert.deepStrictEqual(yield* post(308), { method: "POST", type: "application/x-www-form-urlencoded" })
      const landings = server.requests.filter((entry) => entry.url === "/landing")
      assert.deepStrictEqual(landings.map((entry) => entry.body), ["", "", "", "a=1", "a=1"])
    })
  )

  it.effect("credentials headers are dropped on a cross-origin hop and kept on a same-origin one", () =>
    Effect.gen(function* () {
      const other = yield* pageServer((incoming, response) => response.end(String(incoming.headers.authorization ?? "none")))
      const start = yield* pageServer((incoming, response) => {
        if (incoming.url === "/same") {
          response.writeHead(302, { location: "/echo" })
          response.end()
        } else if (incoming.url === "/echo") {
          response.end(String(incoming.headers.authorization ?? "none"))
        } else {
          response.writeHead(302, { location: `${other.origin}/` })
          response.end()
        }
      })
      const headers = { authorization: "Bearer t0ken", cookie: "a=b" }
      const cross = yield* request(dev, { url: `${start.origin}/cross`, headers })
      assert.strictEqual(Buffer.from(cross.body).toString(), "none")
      assert.isUndefined(other.requests[0]?.headers.cookie)
      const same = yield* request(dev, { url: `${start.origin}/same`, headers })
      assert.strictEqual(Buffer.from(same.body).toString(), "Bearer t0ken")
    })
  )

  it.effect("a 3xx without Location and a non-2xx are reported as such", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((incoming, response) => {
        response.writeHead(incoming.url === "/nowhere" ? 302 : 503, { "content-type": "text/plain" })
        response.end("busy")
      })
      const nowhere = yield* Effect.result(request(dev, { url: `${server.origin}/nowhere` }))
      assert.isTrue(Result.isFailure(nowhere) && nowhere.failure instanceof SafeHttpError && nowhere.failure.code === "BAD_REDIRECT")
      const busy = yield* request(dev, { url: `${server.origin}/busy` })
      assert.strictEqual(busy.status, 503)
    })
  )
})
