import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { GuildMcpRegistry, type GuildMcpServerConfig } from "../../src/mcp/GuildMcpRegistry"
import * as GuildMcpRegistryStore from "../../src/store/GuildMcpRegistryStore"
import { SecretBox } from "../../src/store/SecretBox"
import { makeLogCapture } from "../support/tools/logCapture"
import { migratedLayer, type TestDatabase, testDatabases } from "./databases"
import { testSecretKey } from "./stores"

const oldKey = new Uint8Array(32).fill(5)
const newKey = new Uint8Array(32).fill(6)
const SECRET = "Bearer mcp-secret-7f3a9c"

const server = (name: string, headers: Readonly<Record<string, string>>): GuildMcpServerConfig => ({
  guildId: "g1",
  name,
  url: `https://mcp.example.com/${name}`,
  type: "generic",
  enabled: true,
  headers,
  addedBy: "admin",
  addedAt: 1
})

const rawHeaders = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT name_key, headers FROM guild_mcp_servers ORDER BY name_key`).pipe(
  Effect.map((rows) => rows.map((row) => [String(row["name_key"]), String(row["headers"])] as const))
)

/** One migrated database kept for the test; the registry rebuilt over it per SecretBox (a restart with other keys). */
const sharedDatabase = (database: TestDatabase) =>
  Effect.map(Effect.flatMap(Effect.scope, (scope) => Layer.buildWithScope(migratedLayer(database), scope)), (context) => {
    const sql = Layer.succeedContext(context)
    return {
      sql,
      registryWith: (secrets: Layer.Layer<SecretBox>) => Layer.merge(GuildMcpRegistryStore.layer().pipe(Layer.provide(Layer.merge(sql, secrets))), sql),
      startUp: (secrets: Layer.Layer<SecretBox>) =>
        Effect.scoped(Layer.build(GuildMcpRegistryStore.sealPlainSecretsLayer.pipe(Layer.provide(Layer.merge(sql, secrets)))))
    }
  })

for (const database of testDatabases) {
  describe(`guild MCP headers at rest on ${database.name}`, () => {
    it.effect("headers are sealed in the database and come back whole; servers without headers need no key", () =>
      Effect.gen(function*() {
        const { registryWith } = yield* sharedDatabase(database)
        yield* Effect.gen(function*() {
          const registry = yield* GuildMcpRegistry
          yield* registry.add(server("search", { Authorization: SECRET, "X-Team": "t-42" }))
          yield* registry.add(server("open", {}))
          const [open, search] = yield* rawHeaders
          assert.deepStrictEqual(open, ["open", "{}"])
          assert.match(search?.[1] ?? "", /^lcs1\./)
          assert.notInclude(search?.[1] ?? "", "mcp-secret")
          assert.notInclude(search?.[1] ?? "", "Authorization")
          const listed = yield* registry.list("g1")
          assert.deepStrictEqual(listed.map((config) => [config.name, config.headers, config.enabled]), [
            ["open", {}, true],
            ["search", { Authorization: SECRET, "X-Team": "t-42" }, true]
          ])
        }).pipe(Effect.provide(registryWith(SecretBox.make({ current: testSecretKey }))))
        // Without LOOPCORD_SECRET_KEY: headers are refused with a clear message and a log line; no header, no problem.
        yield* Effect.gen(function*() {
          const registry = yield* GuildMcpRegistry
          const logs = yield* makeLogCapture
          const error = yield* Effect.flip(logs.capture(registry.add(server("keyed", { Authorization: SECRET }))))
          assert.strictEqual(error.reason, "invalid")
          assert.include(error.message, "LOOPCORD_SECRET_KEY")
          assert.notInclude(error.message, SECRET)
          assert.strictEqual((yield* logs.matching("refused to store guild MCP headers: LOOPCORD_SECRET_KEY is not set")).length, 1)
          yield* registry.add({ ...server("plain", {}), url: "https://mcp.example.com/mcp" })
          assert.deepStrictEqual((yield* rawHeaders).map(([name]) => name), ["open", "plain", "search"])
        }).pipe(Effect.provide(registryWith(SecretBox.unkeyed)))
      }))

    it.effect("plain-text headers an older version stored are sealed at start-up once LOOPCORD_SECRET_KEY is set", () =>
      Effect.gen(function*() {
        const { registryWith, sql, startUp } = yield* sharedDatabase(database)
        yield* Effect.flatMap(SqlClient.SqlClient, (client) =>
          client`INSERT INTO guild_mcp_servers (guild_id, name_key, name, url, server_type, enabled, headers, added_by, added_at)
            VALUES ('g1', 'legacy', 'legacy', 'https://mcp.example.com/legacy', 'generic', 1, ${JSON.stringify({ Authorization: SECRET })}, 'admin', 1)`).pipe(
          Effect.provide(sql)
        )
        // No key yet: the rows stay readable and the operator is told how many are plain.
        const logs = yield* makeLogCapture
        yield* logs.capture(startUp(SecretBox.unkeyed))
        assert.strictEqual((yield* logs.matching("1 guild MCP server(s) keep plain-text headers in the database: set LOOPCORD_SECRET_KEY")).length, 1)
        assert.include((yield* Effect.provide(rawHeaders, sql))[0]?.[1] ?? "", "mcp-secret")
        // With the key, start-up seals them; the registration reads the same.
        yield* logs.capture(startUp(SecretBox.make({ current: testSecretKey })))
        assert.strictEqual((yield* logs.matching("sealed the plain-text headers of 1 guild MCP server(s)")).length, 1)
        const [, stored] = (yield* Effect.provide(rawHeaders, sql))[0] ?? []
        assert.match(stored ?? "", /^lcs1\./)
        assert.notInclude(stored ?? "", "mcp-secret")
        const listed = yield* Effect.flatMap(GuildMcpRegistry, (registry) => registry.list("g1")).pipe(
          Effect.provide(registryWith(SecretBox.make({ current: testSecretKey })))
        )
        assert.deepStrictEqual(listed[0]?.headers, { Authorization: SECRET })
      }))

    it.effect("rotation re-seals on first read; headers no configured key opens leave the server off and unusable, without their value in any log", () =>
      Effect.gen(function*() {
        const { registryWith, sql } = yield* sharedDatabase(database)
        yield* Effect.flatMap(GuildMcpRegistry, (registry) => registry.add(server("search", { Authorization: SECRET }))).pipe(
          Effect.provide(registryWith(SecretBox.make({ current: oldKey })))
        )
        const before = (yield* Effect.provide(rawHeaders, sql))[0]?.[1] ?? ""
        const rotated = yield* Effect.flatMap(GuildMcpRegistry, (registry) => registry.list("g1")).pipe(
          Effect.provide(registryWith(SecretBox.make({ current: newKey, previous: oldKey })))
        )
        assert.deepStrictEqual(rotated[0]?.headers, { Authorization: SECRET })
        const after = (yield* Effect.provide(rawHeaders, sql))[0]?.[1] ?? ""
        assert.notStrictEqual(after, before)
        const newOnly = yield* Effect.flatMap(GuildMcpRegistry, (registry) => registry.list("g1")).pipe(
          Effect.provide(registryWith(SecretBox.make({ current: newKey })))
        )
        assert.isTrue(newOnly[0]?.enabled)
        // A bot that has neither key: the server is off, with no headers, and says why.
        const logs = yield* makeLogCapture
        const lost = yield* logs.capture(Effect.flatMap(GuildMcpRegistry, (registry) => registry.list("g1")).pipe(
          Effect.provide(registryWith(SecretBox.make({ current: testSecretKey })))
        ))
        assert.deepStrictEqual(lost.map((config) => [config.enabled, config.headers, config.headersUnusable]), [[false, {}, true]])
        assert.strictEqual((yield* logs.matching(`guild MCP server "search" has headers that do not open`)).length, 1)
        assert.notInclude(JSON.stringify(yield* logs.logs), "mcp-secret")
      }))
  })
}
