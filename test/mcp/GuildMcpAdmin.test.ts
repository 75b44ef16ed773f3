import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result } from "effect"
import { TestClock } from "effect/testing"
import { GuildMcpAdmin, type AddGuildMcpServer } from "../../src/mcp/GuildMcpAdmin"
import { GuildMcpPool } from "../../src/mcp/GuildMcpPool"
import { GuildMcpRegistry } from "../../src/mcp/GuildMcpRegistry"
import { startDroppingServer, startStreamableServer } from "../support/mcpServers/httpServers"
import * as Stores from "../../src/store/Stores"
import { guildMcpLayer, serve, waitUntil } from "../support/mcpServers/mcpTestKit"

const request = (overrides: Partial<AddGuildMcpServer> & { readonly url: string }): AddGuildMcpServer => ({
  guildId: "guild-1",
  name: "tools",
  type: "generic",
  addedBy: "admin-1",
  ...overrides
})

const failure = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.result(effect), (result) => (Result.isFailure(result) ? result.failure : undefined))

describe("GuildMcpAdmin (/mcp add|remove|list|enable|disable)", () => {
  it.effect("add validates the name and the URL with the address policy", () =>
    Effect.gen(function* () {
      const admin = yield* GuildMcpAdmin
      const badName = yield* failure(admin.add(request({ name: "no spaces!", url: "http://tools.example/mcp" })))
      assert.strictEqual(badName?.reason, "invalid_name")
      const privateUrl = yield* failure(admin.add(request({ url: "http://127.0.0.1:8080/mcp" })))
      assert.strictEqual(privateUrl?.reason, "private_address")
      assert.strictEqual(
        privateUrl?.message,
        "Refused: 127.0.0.1 is a loopback (RFC 1122) address. Guild MCP servers must be on the public internet (the bot's operator can allow private networks with GUILD_MCP_ALLOW_PRIVATE_NETWORK=true)."
      )
      const metadata = yield* failure(admin.add(request({ url: "http://169.254.169.254/mcp" })))
      assert.strictEqual(metadata?.reason, "private_address")
      assert.include(metadata?.message ?? "", "may never use such an address")
      const unknown = yield* failure(admin.add(request({ url: "http://nowhere.example/mcp" })))
      assert.strictEqual(unknown?.message, "Could not resolve nowhere.example; check the MCP server URL.")
      const credentials = yield* failure(admin.add(request({ url: "http://user:pw@tools.example/mcp" })))
      assert.strictEqual(credentials?.reason, "invalid_url")
      const ftp = yield* failure(admin.add(request({ url: "ftp://tools.example/mcp" })))
      assert.strictEqual(ftp?.reason, "invalid_url")
      const added = yield* admin.add(request({ url: "https://tools.example/mcp?api_key=s3cret", headers: { authorization: "Bearer guild" } }))
      assert.strictEqual(added.enabled, true)
      const [view] = yield* admin.list("guild-1")
      assert.strictEqual(view?.url, "https://tools.example", "the origin only: path and query may hold a key")
      assert.deepStrictEqual(view?.headerNames, ["authorization"])
      assert.strictEqual(view?.connection._tag, "Idle")
      assert.notInclude(JSON.stringify(view), "s3cret")
      assert.notInclude(JSON.stringify(view), "Bearer guild")
    }).pipe(Effect.provide(guildMcpLayer({ allowPrivateNetwork: false, dns: { "tools.example": ["93.184.215.14"] } }).layer))
  )

  it.effect("at most 10 servers per guild; names are unique per guild", () =>
    Effect.gen(function* () {
      const admin = yield* GuildMcpAdmin
      for (let index = 0; index < 10; index++) {
        yield* admin.add(request({ name: `server-${index}`, url: `http://127.0.0.1:${9000 + index}/mcp` }))
      }
      const eleventh = yield* failure(admin.add(request({ name: "server-10", url: "http://127.0.0.1:9010/mcp" })))
      assert.strictEqual(eleventh?.reason, "limit_reached")
      const otherGuild = yield* admin.add(request({ guildId: "guild-2", name: "server-0", url: "http://127.0.0.1:9000/mcp" }))
      assert.strictEqual(otherGuild.guildId, "guild-2")
      yield* admin.remove("guild-1", "server-9")
      const duplicate = yield* failure(admin.add(request({ name: "server-0", url: "http://127.0.0.1:9000/mcp" })))
      assert.strictEqual(duplicate?.reason, "duplicate_name")
      assert.strictEqual((yield* admin.list("guild-1")).length, 9)
      const missing = yield* failure(admin.remove("guild-1", "nope"))
      assert.strictEqual(missing?.reason, "not_found")
      assert.strictEqual((yield* failure(admin.disable("guild-1", "nope")))?.reason, "not_found")
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[86] remove and disable clear a quarantine at once, even for a server that never connected", () =>
    Effect.gen(function* () {
      const server = yield* serve(startDroppingServer)
      const admin = yield* GuildMcpAdmin
      const pool = yield* GuildMcpPool
      const registry = yield* GuildMcpRegistry
      const config = yield* admin.add(request({ url: server.url }))
      yield* Effect.result(pool.session(config))
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Quarantined")
      yield* admin.disable("guild-1", "tools")
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Idle")
      yield* admin.enable("guild-1", "tools")
      assert.isTrue((yield* registry.list("guild-1"))[0]?.enabled)
      yield* Effect.result(pool.session(config))
      assert.strictEqual(server.connections(), 2, "dialed again right away after disable/enable")
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Quarantined")
      yield* TestClock.adjust(Duration.seconds(5))
      yield* admin.remove("guild-1", "tools")
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Idle")
      assert.deepStrictEqual(yield* registry.list("guild-1"), [])
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("disable closes the pooled client; list shows the live connection", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const admin = yield* GuildMcpAdmin
      const pool = yield* GuildMcpPool
      const config = yield* admin.add(request({ url: server.url }))
      yield* pool.session(config)
      const [view] = yield* admin.list("guild-1")
      assert.isTrue(view?.connection._tag === "Connected" && view.connection.toolNames.includes("echo"))
      yield* waitUntil(() => server.log.requests.some((entry) => entry.method === "GET"), "the standalone SSE stream")
      yield* admin.disable("guild-1", "tools")
      yield* waitUntil(() => server.log.abandonedRequests >= 1, "the client's stream to close")
      const [disabled] = yield* admin.list("guild-1")
      assert.strictEqual(disabled?.enabled, false)
      assert.strictEqual(disabled?.connection._tag, "Idle")
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  const registries = [
    ["in memory", undefined],
    ["SQLite store", Stores.layerMemory]
  ] as const
  for (const [where, registry] of registries) {
    it.effect(`[item 6] names match in any case (${where}): remove and disable close the pooled connection`, () =>
      Effect.gen(function* () {
        const server = yield* serve(() => startStreamableServer())
        const admin = yield* GuildMcpAdmin
        const pool = yield* GuildMcpPool
        const config = yield* admin.add(request({ name: "Tools", url: server.url }))
        const duplicate = yield* failure(admin.add(request({ name: "TOOLS", url: server.url })))
        assert.strictEqual(duplicate?.reason, "duplicate_name")
        yield* pool.session(config)
        yield* waitUntil(() => server.log.requests.some((entry) => entry.method === "GET"), "the standalone SSE stream")
        yield* admin.disable("guild-1", "tOOLS")
        yield* waitUntil(() => server.log.abandonedRequests >= 1, "disable to close the client's stream")
        assert.strictEqual((yield* pool.status("guild-1", "Tools"))._tag, "Idle")
        yield* admin.enable("guild-1", "TOOLS")
        const [enabled] = yield* admin.list("guild-1")
        assert.isTrue(enabled?.enabled)
        yield* pool.session({ ...config, enabled: true })
        assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Connected", "one pool entry whatever the case")
        yield* waitUntil(() => server.log.requests.filter((entry) => entry.method === "GET").length >= 2, "the second stream")
        yield* admin.remove("guild-1", "tools")
        yield* waitUntil(() => server.log.abandonedRequests >= 2, "remove to close the client's stream")
        assert.strictEqual((yield* pool.status("guild-1", "Tools"))._tag, "Idle")
        assert.deepStrictEqual(yield* admin.list("guild-1"), [])
      }).pipe(Effect.provide(guildMcpLayer(registry === undefined ? {} : { registry }).layer))
    )
  }
})
