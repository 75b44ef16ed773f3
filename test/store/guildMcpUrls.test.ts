import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { execFile } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { GuildMcpRegistry, type GuildMcpServerConfig } from "../../src/mcp/GuildMcpRegistry"
import * as Database from "../../src/store/Database"
import type { DatabaseTarget } from "../../src/config/DatabaseUrl"
import * as GuildMcpRegistryStore from "../../src/store/GuildMcpRegistryStore"
import { SecretBox } from "../../src/store/SecretBox"
import { makeLogCapture } from "../support/tools/logCapture"
import { migrateUpTo, postgres, sqliteFile, type TestDatabase, testDatabases } from "./databases"
import { testSecretKey } from "./stores"

/** A Zapier-style URL: the path and the query are the credential. */
const SECRET_URL = "https://mcp.zapier.example/s/sk-zap-PATHSECRET123/mcp?api_key=QUERYSECRET456"
const ORIGIN = "https://mcp.zapier.example"
const SECRETS = ["PATHSECRET123", "QUERYSECRET456", "sk-zap", "api_key="]

const server = (name: string, url: string): GuildMcpServerConfig => ({
  guildId: "g1",
  name,
  url,
  type: "generic",
  enabled: true,
  headers: {},
  addedBy: "admin",
  addedAt: 1
})

const keyed = SecretBox.make({ current: testSecretKey })

const rawUrls = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT name_key, url, url_rest FROM guild_mcp_servers ORDER BY name_key`).pipe(
  Effect.map((rows) => rows.map((row) => ({ name: String(row["name_key"]), url: String(row["url"]), rest: String(row["url_rest"]) })))
)

const assertNoSecret = (where: string, text: string) => {
  for (const secret of SECRETS) assert.notInclude(text, secret, `${where} shows ${secret}`)
}

/** Every file of a SQLite database (the main file, its write-ahead log, its shared memory), as text. */
const sqliteFiles = (path: string): string =>
  readdirSync(dirname(path))
    .filter((file) => file.startsWith("loopcord.db"))
    .map((file) => readFileSync(join(dirname(path), file)).toString("latin1"))
    .join("\n")

/** `pg_dump` of the test schema (the binary on the machine), as the operator would take a backup. */
const pgDump = (target: DatabaseTarget) =>
  Effect.callback<string, Error>((resume) => {
    if (target._tag !== "Postgres") return resume(Effect.fail(new Error("not PostgreSQL")))
    const url = new URL(Redacted.value(target.url))
    const schema = /search_path=(\S+)/.exec(decodeURIComponent(url.searchParams.get("options") ?? ""))?.[1] ?? ""
    execFile(
      "pg_dump",
      ["-h", url.hostname, "-p", url.port || "5432", "-U", decodeURIComponent(url.username), "-d", url.pathname.slice(1), `--schema=${schema}`],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => resume(error === null ? Effect.succeed(stdout) : Effect.fail(error))
    )
  })

/** The registry and the start-up step over one database, built per SecretBox (a restart with other keys). */
const over = (client: Layer.Layer<SqlClient.SqlClient>) => ({
  registry: (secrets: Layer.Layer<SecretBox>) => GuildMcpRegistryStore.layer().pipe(Layer.provide(Layer.merge(client, secrets))),
  startUp: (secrets: Layer.Layer<SecretBox>) =>
    Effect.scoped(Layer.build(GuildMcpRegistryStore.sealPlainSecretsLayer.pipe(Layer.provide(Layer.merge(client, secrets)))))
})

const listed = (registry: Layer.Layer<GuildMcpRegistry>) => Effect.flatMap(GuildMcpRegistry, (r) => r.list("g1")).pipe(Effect.provide(registry))

for (const database of testDatabases) {
  describe(`[issue 25] guild MCP URLs at rest on ${database.name}: only the origin is plain text`, () => {
    it.effect("a URL added with the key: origin in `url`, path and query sealed in `url_rest`; read back whole", () =>
      Effect.gen(function*() {
        const client = Layer.succeedContext(yield* Layer.build(Database.layer(yield* database.target)))
        const { registry } = over(client)
        yield* Effect.flatMap(GuildMcpRegistry, (r) => r.add(server("zap", SECRET_URL))).pipe(Effect.provide(registry(keyed)))
        const [row] = yield* Effect.provide(rawUrls, client)
        assert.strictEqual(row?.url, ORIGIN)
        assert.match(row?.rest ?? "", /^lcs1\./)
        assertNoSecret("the stored row", JSON.stringify(row))
        assert.deepStrictEqual((yield* listed(registry(keyed))).map((config) => [config.url, config.enabled]), [[SECRET_URL, true]])
        // A sealed URL copied into another row does not open there: that server stays off.
        yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql`INSERT INTO guild_mcp_servers (guild_id, name_key, name, url, url_rest, server_type, enabled, headers, added_by, added_at)
            VALUES ('g1', 'copy', 'copy', ${ORIGIN}, ${row?.rest ?? ""}, 'generic', 1, '{}', 'admin', 2)`).pipe(Effect.provide(client))
        const copy = (yield* listed(registry(keyed))).find((config) => config.name === "copy")
        assert.deepStrictEqual([copy?.enabled, copy?.headersUnusable, copy?.url], [false, true, ORIGIN])
      }))

    it.effect("without LOOPCORD_SECRET_KEY a URL with a secret path or query is refused; a bare endpoint is kept, and sealed once there is a key", () =>
      Effect.gen(function*() {
        const client = Layer.succeedContext(yield* Layer.build(Database.layer(yield* database.target)))
        const { registry } = over(client)
        const logs = yield* makeLogCapture
        const refused = yield* Effect.flip(logs.capture(
          Effect.flatMap(GuildMcpRegistry, (r) => r.add(server("zap", SECRET_URL))).pipe(Effect.provide(registry(SecretBox.unkeyed)))
        ))
        assert.strictEqual(refused.reason, "invalid")
        assert.include(refused.message, "LOOPCORD_SECRET_KEY")
        assertNoSecret("the refusal", refused.message)
        assert.strictEqual((yield* logs.matching("refused to store a guild MCP URL with a path or query: LOOPCORD_SECRET_KEY is not set")).length, 1)
        yield* Effect.flatMap(GuildMcpRegistry, (r) => r.add(server("bare", "https://mcp.example.com/mcp"))).pipe(Effect.provide(registry(SecretBox.unkeyed)))
        assert.deepStrictEqual(yield* Effect.provide(rawUrls, client), [{ name: "bare", url: "https://mcp.example.com", rest: "/mcp" }])
        // The first read with a key seals even the bare endpoint: nothing but the origin stays plain.
        assert.deepStrictEqual((yield* listed(registry(keyed))).map((config) => config.url), ["https://mcp.example.com/mcp"])
        assert.match((yield* Effect.provide(rawUrls, client))[0]?.rest ?? "", /^lcs1\./)
      }))
  })
}

/** A database as version 13 left it, with a whole URL (and plain headers) in its only row. */
const legacyDatabase = (database: TestDatabase) =>
  Effect.gen(function*() {
    const target = yield* database.target
    const client = Layer.succeedContext(yield* Layer.build(Database.sqlClientLayer(target)))
    yield* Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* migrateUpTo("13_guild_image_tags")
      yield* sql`INSERT INTO guild_mcp_servers (guild_id, name_key, name, url, server_type, enabled, headers, added_by, added_at)
        VALUES ('g1', 'zap', 'zap', ${SECRET_URL}, 'generic', 1, ${JSON.stringify({ "X-Api-Key": "HEADERSECRET789" })}, 'admin', 1)`
      const applied = yield* Database.migrate
      assert.deepStrictEqual(applied.map(([id, name]) => `${id}_${name}`), ["14_guild_mcp_url_sealed", "15_server_settings"])
    }).pipe(Effect.provide(client))
    return { target, client }
  })

describe("[issue 25] the migration re-seals the URLs an older version stored whole", () => {
  for (const database of [sqliteFile, postgres]) {
    it.effect(`${database.name}: after start-up with the key, no path or query is left in the database${database === postgres ? " (pg_dump)" : "'s files"}`, () =>
      Effect.gen(function*() {
        const { client, target } = yield* legacyDatabase(database)
        const { registry, startUp } = over(client)
        // No key yet: the URL stays as it was, readable, and the operator is told.
        const logs = yield* makeLogCapture
        yield* logs.capture(startUp(SecretBox.unkeyed))
        assert.strictEqual((yield* logs.matching("1 guild MCP server URL(s) keep their path or query in plain text in the database: set LOOPCORD_SECRET_KEY")).length, 1)
        assert.deepStrictEqual((yield* listed(registry(SecretBox.unkeyed))).map((config) => config.url), [SECRET_URL])
        // With the key, start-up seals it (and the plain headers).
        yield* logs.capture(startUp(keyed))
        assert.strictEqual((yield* logs.matching("sealed the path and query of 1 guild MCP server URL(s) under LOOPCORD_SECRET_KEY")).length, 1)
        const [row] = yield* Effect.provide(rawUrls, client)
        assert.strictEqual(row?.url, ORIGIN)
        assert.match(row?.rest ?? "", /^lcs1\./)
        const [config] = yield* listed(registry(keyed))
        assert.deepStrictEqual([config?.url, config?.headers, config?.enabled], [SECRET_URL, { "X-Api-Key": "HEADERSECRET789" }, true])
        const dumped = target._tag === "SqliteFile" ? sqliteFiles(target.path) : yield* pgDump(target)
        assert.include(dumped, ORIGIN, "the dump holds the row")
        assertNoSecret("the database", dumped)
        assert.notInclude(dumped, "HEADERSECRET789")
      }))
  }
})
