import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Ref } from "effect"
import { GuildMcpPool } from "../../src/mcp/GuildMcpPool"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { startRedirectServer, startStreamableServer } from "../support/mcpServers/httpServers"
import {
  guildMcpLayer,
  guildServer,
  makeToolContext,
  provideToolContext,
  registryWithGuildMcp,
  serve
} from "../support/mcpServers/mcpTestKit"
import { text, type TestTool } from "../support/mcpServers/testTools"

/** A pretend-public address: the fake DNS answers it, the test connector maps it to loopback. */
const PUBLIC_IP = "93.184.215.14"

const fetchTool: TestTool = {
  name: "fetch",
  description: "Fetches a URL",
  inputSchema: { properties: { url: { type: "string", format: "uri" } }, required: ["url"] },
  run: async (args) => text(`fetched ${String(args["url"])}`)
}
const batchTool: TestTool = {
  name: "fetch_many",
  description: "Fetches several endpoints",
  inputSchema: {
    properties: {
      requests: { type: "array", items: { type: "object", properties: { endpoint: { type: "string", format: "uri" } } } }
    }
  },
  run: async () => text("fetched all")
}

/** Production policy; the guild server is reached as `tools.example` (public address, really loopback). */
const production = (port: number, type: "generic" | "url_fetcher") => {
  const registration = guildServer({ name: "fetcher", type, url: `http://tools.example:${port}/mcp` })
  return registryWithGuildMcp({
    allowPrivateNetwork: false,
    dns: { "tools.example": [PUBLIC_IP] },
    translate: { [PUBLIC_IP]: "127.0.0.1" },
    registrations: [registration]
  })
}

const callIn = (name: string, args: Record<string, unknown>) =>
  Effect.gen(function* () {
    const { context, progress } = yield* makeToolContext()
    const result = yield* Effect.flatMap(ToolRegistry, (registry) => registry.execute(name, args)).pipe(provideToolContext(context))
    return { result, progress }
  })

describe("guild MCP URL arguments and guarded transport (spec §6.5, §6.6)", () => {
  it.effect("a url_fetcher's URL arguments go through the fetch_url address policy before the call is sent", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer({ tools: [fetchTool, batchTool] }))
      const outcome = yield* Effect.gen(function* () {
        const loopback = yield* callIn("fetch", { url: "http://127.0.0.1:8080/admin" })
        const metadata = yield* callIn("fetch", { url: "http://169.254.169.254/latest/meta-data" })
        const nested = yield* callIn("fetch_many", { requests: [{ endpoint: `http://tools.example:${server.port}/ok` }, { endpoint: "http://10.1.2.3/" }] })
        const allowed = yield* callIn("fetch", { url: `http://tools.example:${server.port}/page` })
        return { loopback, metadata, nested, allowed }
      }).pipe(Effect.provide(production(server.port, "url_fetcher").layer))

      // The model reads the kind of refusal and the URL it wrote; the detail keeps the reason in full.
      assert.isFalse(outcome.loopback.result.success)
      assert.strictEqual(outcome.loopback.result.error, "The URL http://127.0.0.1:8080/admin was refused: blocked: a private address.")
      assert.include(outcome.loopback.result.detail ?? "", "FETCH_URL_ALLOW_PRIVATE_NETWORK=true")
      assert.isFalse(outcome.metadata.result.success)
      assert.strictEqual(outcome.metadata.result.error, "The URL http://169.254.169.254/latest/meta-data was refused: blocked: an address that is never reached.")
      assert.include(outcome.metadata.result.detail ?? "", "never fetched")
      assert.isFalse(outcome.nested.result.success)
      assert.strictEqual(outcome.nested.result.error, "The URL http://10.1.2.3/ was refused: blocked: a private address.")
      assert.include(outcome.nested.result.detail ?? "", "10.1.2.3 is private")
      assert.deepStrictEqual(outcome.allowed.result.data, { summary: `fetched http://tools.example:${server.port}/page` })
      // Only the allowed call reached the server; its progress notice is the fetch notice.
      assert.deepStrictEqual(server.log.toolCalls.map((call) => call.name), ["fetch"])
      assert.deepStrictEqual(yield* Ref.get(outcome.allowed.progress), [`Fetching http://tools.example:${server.port}/page`])
    })
  )

  it.effect("a generic server's arguments are passed through unchecked (only replacement families are gated)", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer({ tools: [fetchTool] }))
      const { result } = yield* callIn("fetch", { url: "http://127.0.0.1:8080/admin" }).pipe(
        Effect.provide(production(server.port, "generic").layer)
      )
      assert.isTrue(result.success)
      assert.strictEqual(server.log.toolCalls.length, 1)
    })
  )

  it.effect("in production a guild server on a private address is refused before any socket is opened", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const stack = guildMcpLayer({ allowPrivateNetwork: false })
      const result = yield* Effect.result(Effect.flatMap(GuildMcpPool, (pool) => pool.session(guildServer({ url: server.url })))).pipe(
        Effect.provide(stack.layer)
      )
      assert.isTrue(Result.isFailure(result))
      assert.include(String(Result.isFailure(result) ? result.failure.message : ""), "Refusing to fetch 127.0.0.1")
      assert.strictEqual(stack.connector.attempts.length, 0)
      assert.strictEqual(server.log.requests.length, 0)
    })
  )

  it.effect("a redirect is refused and its Location is never contacted (no SSE fallback either)", () =>
    Effect.gen(function* () {
      const target = yield* serve(() => startStreamableServer())
      const redirecting = yield* serve(() => startRedirectServer(target.url))
      const result = yield* Effect.result(
        Effect.flatMap(GuildMcpPool, (pool) => pool.session(guildServer({ url: redirecting.url })))
      ).pipe(Effect.provide(guildMcpLayer().layer))
      assert.isTrue(Result.isFailure(result))
      assert.include(Result.isFailure(result) ? result.failure.message : "", "redirects are not followed")
      assert.strictEqual(redirecting.log.requests.length, 1)
      assert.strictEqual(target.log.requests.length, 0)
    })
  )

  it.effect("a tools/list answer past the control cap is cut off: discovery fails instead of buffering without bound", () =>
    Effect.gen(function* () {
      const huge: TestTool = { name: "huge", description: "x".repeat(64 * 1024), run: async () => text("never") }
      const server = yield* serve(() => startStreamableServer({ tools: [huge] }))
      // Tool results and streams keep the 8 MiB cap; every other POST answer has its own, lower one.
      const result = yield* Effect.result(
        Effect.flatMap(GuildMcpPool, (pool) => pool.session(guildServer({ url: server.url })))
      ).pipe(Effect.provide(guildMcpLayer({ settings: { guildControlResponseCapBytes: 16 * 1024 } }).layer))
      assert.isTrue(Result.isFailure(result))
      assert.include(Result.isFailure(result) ? result.failure.message : "", "exceeds the maximum allowed size")
      // Under the default caps the same server connects, with its description cut to 1024 characters.
      const session = yield* Effect.flatMap(GuildMcpPool, (pool) => pool.session(guildServer({ url: server.url }))).pipe(
        Effect.provide(guildMcpLayer().layer)
      )
      assert.strictEqual(session.tools[0]?.description.length, 1024)
      assert.isTrue(session.tools[0]?.description.endsWith("x…"))
    })
  )

  it.effect("a tool answer past the cap fails the call at once (not at the timeout); the next use reconnects", () =>
    Effect.gen(function* () {
      const big: TestTool = { name: "big", description: "A big answer", run: async () => text("y".repeat(64 * 1024)) }
      const small: TestTool = { name: "small", description: "A small answer", run: async () => text("ok") }
      const server = yield* serve(() => startStreamableServer({ tools: [big, small] }))
      const registration = guildServer({ url: server.url })
      const stack = registryWithGuildMcp({ registrations: [registration], settings: { guildResponseCapBytes: 16 * 1024 } })
      const { first, second } = yield* Effect.gen(function* () {
        const first = yield* callIn("big", {})
        const second = yield* callIn("small", {})
        return { first, second }
      }).pipe(Effect.provide(stack.layer))
      assert.isFalse(first.result.success)
      assert.strictEqual(first.result.error, "MCP tool 'big' on 'tools' failed: its answer was too large")
      assert.include(first.result.detail ?? "", "exceeds the maximum allowed size")
      assert.deepStrictEqual(second.result.data, { summary: "ok" })
      assert.strictEqual(server.log.initializes, 2)
    })
  )
})
