import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { GuildMcpRegistry, type GuildMcpServerConfig, MAX_GUILD_MCP_SERVERS } from "../../src/mcp/GuildMcpRegistry"
import * as GuildMcpRegistryStore from "../../src/store/GuildMcpRegistryStore"
import { SecretBox } from "../../src/store/SecretBox"
import { migratedLayer, testDatabases } from "./databases"
import { storesOn } from "./stores"

const server = (name: string, overrides: Partial<GuildMcpServerConfig> = {}): GuildMcpServerConfig => ({
  guildId: "g1",
  name,
  url: `https://mcp.example.com/${name}`,
  type: "generic",
  enabled: true,
  headers: {},
  addedBy: "admin",
  addedAt: 1,
  ...overrides
})

for (const database of testDatabases) {
  describe(`GuildMcpRegistry (database) on ${database.name}`, () => {
    it.effect("add, list (in order), setEnabled, remove; headers are kept", () =>
      Effect.gen(function* () {
        const registry = yield* GuildMcpRegistry
        const fetcher = server("fetcher", { type: "url_fetcher", headers: { Authorization: "Bearer k" }, addedAt: 5 })
        yield* registry.add(server("search", { type: "web_search", addedAt: 3 }))
        yield* registry.add(fetcher)
        yield* registry.add(server("other", { guildId: "g2" }))
        const listed = yield* registry.list("g1")
        assert.deepStrictEqual(listed.map((config) => config.name), ["search", "fetcher"])
        assert.deepStrictEqual(listed[1], fetcher)
        assert.isTrue(yield* registry.setEnabled("g1", "FETCHER", false))
        assert.isFalse((yield* registry.list("g1"))[1]?.enabled)
        assert.isFalse(yield* registry.setEnabled("g1", "missing", false))
        assert.isTrue(yield* registry.remove("g1", "search"))
        assert.isFalse(yield* registry.remove("g1", "search"))
        assert.deepStrictEqual((yield* registry.list("g1")).map((config) => config.name), ["fetcher"])
        assert.deepStrictEqual((yield* registry.list("g2")).map((config) => config.name), ["other"])
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("a duplicate name (ignoring case) is refused", () =>
      Effect.gen(function* () {
        const registry = yield* GuildMcpRegistry
        yield* registry.add(server("Tools"))
        const error = yield* Effect.flip(registry.add(server("tools")))
        assert.strictEqual(error.reason, "duplicate_name")
        // The same name in another guild is fine.
        yield* registry.add(server("tools", { guildId: "g2" }))
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect(`at most ${MAX_GUILD_MCP_SERVERS} servers per guild, even when added concurrently`, () =>
      Effect.gen(function* () {
        const registry = yield* GuildMcpRegistry
        const results = yield* Effect.all(
          Array.from({ length: MAX_GUILD_MCP_SERVERS + 3 }, (_, index) => Effect.result(registry.add(server(`s${index}`)))),
          { concurrency: 4 }
        )
        const refused = results.filter((result) => result._tag === "Failure")
        assert.strictEqual((yield* registry.list("g1")).length, MAX_GUILD_MCP_SERVERS)
        assert.strictEqual(refused.length, 3)
        for (const result of refused) {
          if (result._tag === "Failure") assert.strictEqual(result.failure.reason, "limit_reached")
        }
        yield* registry.add(server("elsewhere", { guildId: "g2" }))
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("a smaller configured cap applies", () =>
      Effect.gen(function* () {
        const registry = yield* GuildMcpRegistry
        // Without a key only a bare endpoint URL can be stored (its path holds no secret).
        yield* registry.add(server("a", { url: "https://mcp.example.com/mcp" }))
        const error = yield* Effect.flip(registry.add(server("b", { url: "https://mcp.example.com/sse" })))
        assert.strictEqual(error.reason, "limit_reached")
      }).pipe(Effect.provide(GuildMcpRegistryStore.layer({ maxPerGuild: 1 }).pipe(Layer.provide(Layer.merge(migratedLayer(database), SecretBox.unkeyed)))))
    )
  })
}

describe("GuildMcpRegistry validation", () => {
  it.effect("bad names, URLs, types and headers are refused as invalid before storage", () =>
    Effect.gen(function* () {
      const registry = yield* GuildMcpRegistry
      const refused: ReadonlyArray<GuildMcpServerConfig> = [
        server(""),
        server(" leading-space"),
        server("x".repeat(65)),
        server("ok", { url: "not a url" }),
        server("ok", { url: "ftp://mcp.example.com/" }),
        server("ok", { url: "https://user:pass@mcp.example.com/" }),
        server("ok", { headers: { "Bad Header": "v" } }),
        server("ok", { headers: { "X-Key": "a\r\nInjected: yes" } }),
        server("ok", { guildId: " " })
      ]
      for (const config of refused) {
        const error = yield* Effect.flip(registry.add(config))
        assert.strictEqual(error.reason, "invalid", JSON.stringify(config))
      }
      assert.deepStrictEqual(yield* registry.list("g1"), [])
    }).pipe(Effect.provide(storesOn(testDatabases[0]!)))
  )
})
