import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AddressPolicy, DnsResolver, UrlPolicyError } from "../../src/fetch/AddressPolicy"
import { GuardedFetchError, makeGuardedFetch, type GuardedFetchOptions } from "../../src/fetch/guardedFetch"
import { ResponseSizeError } from "../../src/fetch/ResponseSizeError"
import { loopbackConnector } from "../support/fakeWeb/loopbackConnector"
import { pageServer } from "../support/fakeWeb/pageServer"

const setup = (
  options: GuardedFetchOptions & {
    readonly allowPrivateNetwork: boolean
    readonly dns?: Readonly<Record<string, ReadonlyArray<string>>>
    readonly translate?: Readonly<Record<string, string>>
  }
) => {
  const connector = loopbackConnector(options.translate)
  const layer = Layer.merge(
    AddressPolicy.make(options).pipe(Layer.provide(DnsResolver.fromTable(options.dns ?? {}))),
    connector.layer
  )
  return makeGuardedFetch(options).pipe(
    Effect.provide(layer),
    Effect.map((fetch) => ({ fetch, connector }))
  )
}

const rejection = (promise: Promise<unknown>) =>
  Effect.promise(() => promise.then(() => undefined, (error: unknown) => error))

describe("guardedFetch", () => {
  it.effect("connects to the pinned address and keeps the Host header", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((request, response) => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({ host: request.headers.host, method: request.method }))
      })
      const { connector, fetch } = yield* setup({ allowPrivateNetwork: true, dns: { "mcp.test": ["127.0.0.1"] } })
      const response = yield* Effect.promise(() => fetch(`http://mcp.test:${server.port}/mcp`, { method: "POST", body: "{}" }))
      const body = yield* Effect.promise(() => response.json() as Promise<{ host: string; method: string }>)
      assert.deepStrictEqual(body, { host: `mcp.test:${server.port}`, method: "POST" })
      assert.deepStrictEqual(connector.attempts.map((attempt) => attempt.address), ["127.0.0.1"])
      assert.strictEqual(server.requests[0]?.body, "{}")
    })
  )

  it.effect("a redirect rejects (redirect: error) and is never followed", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => {
        response.writeHead(307, { location: "http://169.254.169.254/latest" })
        response.end()
      })
      const { connector, fetch } = yield* setup({ allowPrivateNetwork: true })
      const error = yield* rejection(fetch(`${server.origin}/`))
      assert.instanceOf(error, GuardedFetchError)
      assert.strictEqual((error as GuardedFetchError).code, "REDIRECT_REFUSED")
      assert.strictEqual(server.requests.length, 1)
      assert.deepStrictEqual(connector.refused, [])
    })
  )

  it.effect("refuses other origins, credentials and blocked addresses before connecting", () =>
    Effect.gen(function* () {
      const server = yield* pageServer((_request, response) => response.end("hi"))
      const { connector, fetch } = yield* setup({ allowPrivateNetwork: false })
      const blocked = yield* rejection(fetch(`${server.origin}/`))
      assert.instanceOf(blocked, UrlPolicyError)
      assert.strictEqual((blocked as UrlPolicyError).code, "PRIVATE_NETWORK_BLOCKED")
      const { fetch: sameOriginFetch } = yield* setup({ allowPrivateNetwork: true, sameOrigin: server.origin })
      const other = yield* rejection(sameOriginFetch(`http://127.0.0.2:${server.port}/`))
      assert.instanceOf(other, GuardedFetchError)
      assert.strictEqual((other as GuardedFetchError).code, "ORIGIN_MISMATCH")
      // Off-origin names are refused before any lookup (an unknown name would otherwise be a DNS failure).
      const unresolved = yield* rejection(sameOriginFetch("http://exfiltrate.attacker.test/"))
      assert.instanceOf(unresolved, GuardedFetchError)
      assert.strictEqual((unresolved as GuardedFetchError).code, "ORIGIN_MISMATCH")
      const credentials = yield* rejection(sameOriginFetch(`http://user:secret@127.0.0.1:${server.port}/`))
      assert.instanceOf(credentials, UrlPolicyError)
      assert.strictEqual((credentials as UrlPolicyError).code, "CREDENTIALS_IN_URL")
      assert.strictEqual(server.connections(), 0)
      assert.deepStrictEqual(connector.attempts, [])
    })
  )

  it.effect("the body stops at maxResponseBytes with a ResponseSizeError", () =>
    Effect.gen(function* () {
      let written = 0
      let closed = false
      const server = yield* pageServer((_request, response) => {
        response.writeHead(200, { "content-type": "text/plain" })
        response.on("close", () => {
          closed = true
        })
        const chunk = Buffer.alloc(64 * 1024, 120)
        // An endless body: only the cap can end this read.
        const pump = () => {
          let more = true
          while (more && !closed) {
            more = response.write(chunk)
            written += chunk.length
          }
          if (!closed) response.once("drain", pump)
        }
        pump()
      })
      const { fetch } = yield* setup({ allowPrivateNetwork: true, maxResponseBytes: 256 * 1024 })
      const response = yield* Effect.promise(() => fetch(`${server.origin}/`))
      const error = yield* rejection(response.arrayBuffer())
      assert.instanceOf(error, ResponseSizeError)
      // The download stops: the server sees its response torn down, not drained forever.
      for (let waited = 0; !closed && waited < 2_000; waited += 20) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      }
      assert.isTrue(closed)
      assert.isAbove(written, 256 * 1024)
    })
  )

  it.effect("the caller's AbortSignal aborts a pending request", () =>
    Effect.gen(function* () {
      const server = yield* pageServer(() => {
        // never answers
      })
      const { fetch } = yield* setup({ allowPrivateNetwork: true })
      const controller = new AbortController()
      const pending = rejection(fetch(`${server.origin}/`, { signal: controller.signal }))
      yield* Effect.promise(() => new Promise((resolve) => server.requests.length > 0 ? resolve(undefined) : setTimeout(resolve, 50)))
      controller.abort()
      const error = yield* pending
      assert.instanceOf(error, Error)
      assert.strictEqual((error as Error).name, "AbortError")
    })
  )
})
