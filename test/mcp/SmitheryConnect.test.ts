import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Option, Redacted } from "effect"
import { GuildMcpPool } from "../../src/mcp/GuildMcpPool"
import { smitheryConnectionId } from "../../src/mcp/SmitheryConnect"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { startFakeSmithery } from "../support/mcpServers/fakeSmithery"
import { startStreamableServer } from "../support/mcpServers/httpServers"
import {
  guildMcpLayer,
  guildServer,
  makeToolContext,
  provideToolContext,
  registryWithGuildMcp,
  serve
} from "../support/mcpServers/mcpTestKit"
import { text } from "../support/mcpServers/testTools"

const SMITHERY_KEY = "smithery-test-key-4d1f"

/** Every header value a server saw, for "the key never got here" assertions. */
const headerValues = (log: { readonly requests: ReadonlyArray<{ readonly headers: Readonly<Record<string, string>> }> }) =>
  log.requests.flatMap((request) => Object.values(request.headers))

const stack = (smitheryBaseUrl: string, registrations = [] as ReadonlyArray<ReturnType<typeof guildServer>>) =>
  registryWithGuildMcp({
    // `*.run.tools` resolves to loopback here; the socket connector refuses anything else anyway.
    dns: { "weather.run.tools": ["127.0.0.1"], "plain.example": ["127.0.0.1"] },
    settings: {
      smithery: Option.some({ apiKey: Redacted.make(SMITHERY_KEY), baseUrl: smitheryBaseUrl, namespace: Option.none() })
    },
    registrations
  })

describe("Smithery Connect (design §2 decision 6, spec §6.6)", () => {
  it.effect("[89] a *.run.tools server with a Smithery key connects through Smithery Connect only; the key never reaches the upstream host", () =>
    Effect.gen(function* () {
      const smithery = yield* serve(() =>
        startFakeSmithery({ apiKey: SMITHERY_KEY, tools: [{ name: "forecast", run: async () => text("sunny") }] })
      )
      const upstream = yield* serve(() => startStreamableServer())
      const upstreamUrl = `http://weather.run.tools:${upstream.port}/mcp`
      const registration = guildServer({ name: "weather", url: upstreamUrl, headers: { "x-weather-key": "guild-secret" } })
      const result = yield* Effect.gen(function* () {
        const session = yield* Effect.flatMap(GuildMcpPool, (pool) => pool.session(registration))
        const { context } = yield* makeToolContext()
        const call = yield* Effect.flatMap(ToolRegistry, (registry) => registry.execute("forecast", {})).pipe(provideToolContext(context))
        return { session, call }
      }).pipe(Effect.provide(stack(smithery.baseUrl, [registration]).layer))

      assert.strictEqual(result.session.transport, "smithery")
      assert.deepStrictEqual(result.call.data, { summary: "sunny" })
      const connectionId = smitheryConnectionId(new URL(upstreamUrl), { "x-weather-key": "guild-secret" })
      assert.deepStrictEqual(smithery.upserts, [
        {
          path: `/connect/loopcord-ns/${connectionId}`,
          body: { mcpUrl: upstreamUrl, name: "weather", headers: { "x-weather-key": "guild-secret" } }
        }
      ])
      assert.isTrue(smithery.log.requests.every((request) => request.headers["authorization"] === `Bearer ${SMITHERY_KEY}`))
      assert.isTrue(smithery.log.requests.some((request) => request.path === `/connect/loopcord-ns/${connectionId}/mcp`))
      assert.strictEqual(upstream.log.requests.length, 0, "the upstream host was never contacted")
    })
  )

  it.effect("Smithery failing falls back to Streamable HTTP on the upstream, which gets the guild's headers but never the Smithery key", () =>
    Effect.gen(function* () {
      const smithery = yield* serve(() => startFakeSmithery({ apiKey: SMITHERY_KEY, upsertStatus: 500 }))
      const upstream = yield* serve(() => startStreamableServer())
      const registration = guildServer({
        name: "weather",
        url: `http://weather.run.tools:${upstream.port}/mcp`,
        headers: { "x-weather-key": "guild-secret" }
      })
      const session = yield* Effect.flatMap(GuildMcpPool, (pool) => pool.session(registration)).pipe(
        Effect.provide(stack(smithery.baseUrl).layer)
      )
      assert.strictEqual(session.transport, "streamable-http")
      assert.strictEqual(smithery.upserts.length, 1)
      assert.isAbove(upstream.log.requests.length, 0)
      assert.isTrue(upstream.log.requests.every((request) => request.headers["x-weather-key"] === "guild-secret"))
      assert.isFalse(headerValues(upstream.log).some((value) => value.includes(SMITHERY_KEY)))
      assert.isUndefined(upstream.log.requests.find((request) => request.headers["authorization"] !== undefined))
    })
  )

  it.effect("the connection id is stable: reconnecting re-uses the same Smithery connection; the namespace is looked up once", () =>
    Effect.gen(function* () {
      const smithery = yield* serve(() => startFakeSmithery({ apiKey: SMITHERY_KEY }))
      const registration = guildServer({ name: "weather", url: "http://weather.run.tools:9/mcp" })
      yield* Effect.gen(function* () {
        const pool = yield* GuildMcpPool
        const first = yield* pool.session(registration)
        yield* pool.invalidate(registration, first)
        const second = yield* pool.session(registration)
        assert.notStrictEqual(first, second)
      }).pipe(Effect.provide(stack(smithery.baseUrl).layer))
      assert.strictEqual(smithery.upserts.length, 2)
      assert.strictEqual(smithery.upserts[0]?.path, smithery.upserts[1]?.path)
      assert.strictEqual(smithery.log.requests.filter((request) => request.path === "/namespaces").length, 1)
    })
  )

  it.effect("an account without namespaces gets one created", () =>
    Effect.gen(function* () {
      const smithery = yield* serve(() => startFakeSmithery({ apiKey: SMITHERY_KEY, namespaces: [] }))
      const session = yield* Effect.flatMap(GuildMcpPool, (pool) =>
        pool.session(guildServer({ name: "weather", url: "http://weather.run.tools:9/mcp" }))
      ).pipe(Effect.provide(stack(smithery.baseUrl).layer))
      assert.strictEqual(session.transport, "smithery")
      assert.isTrue(smithery.upserts[0]?.path.startsWith("/connect/created-ns/"))
    })
  )

  it.effect("a server outside *.run.tools never involves Smithery, key or not", () =>
    Effect.gen(function* () {
      const smithery = yield* serve(() => startFakeSmithery({ apiKey: SMITHERY_KEY }))
      const upstream = yield* serve(() => startStreamableServer())
      const session = yield* Effect.flatMap(GuildMcpPool, (pool) =>
        pool.session(guildServer({ url: `http://plain.example:${upstream.port}/mcp` }))
      ).pipe(Effect.provide(stack(smithery.baseUrl).layer))
      assert.strictEqual(session.transport, "streamable-http")
      assert.strictEqual(smithery.log.requests.length, 0)
      assert.isFalse(headerValues(upstream.log).some((value) => value.includes(SMITHERY_KEY)))
    })
  )

  it.effect("without a Smithery key a *.run.tools server is dialed directly", () =>
    Effect.gen(function* () {
      const upstream = yield* serve(() => startStreamableServer())
      const session = yield* Effect.flatMap(GuildMcpPool, (pool) =>
        pool.session(guildServer({ url: `http://weather.run.tools:${upstream.port}/mcp` }))
      ).pipe(Effect.provide(guildMcpLayer({ dns: { "weather.run.tools": ["127.0.0.1"] } }).layer))
      assert.strictEqual(session.transport, "streamable-http")
    })
  )

  it.effect("a Smithery failure is listed with the other transports' failures, without echoing Smithery's answer", () =>
    Effect.gen(function* () {
      const smithery = yield* serve(() => startFakeSmithery({ apiKey: "a-different-key" }))
      const result = yield* Effect.result(
        Effect.flatMap(GuildMcpPool, (pool) => pool.session(guildServer({ name: "weather", url: "http://weather.run.tools:9/mcp" })))
      ).pipe(Effect.provide(stack(smithery.baseUrl).layer))
      if (Result.isSuccess(result) || result.failure._tag !== "McpConnectError") return assert.fail("expected McpConnectError")
      assert.deepStrictEqual(
        result.failure.attempts.map((attempt) => [attempt.transport, attempt.reason]),
        [["smithery", "http"], ["streamable-http", "network"]]
      )
      assert.include(result.failure.message, "Smithery Connect answered HTTP 401")
      assert.notInclude(result.failure.message, "unauthorized")
    })
  )
})
