import { SqlClient } from "effect/sql"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result, Redacted } from "effect"
import { databaseTargetConfig } from "../../src/config/StoreConfig"
import * as Database from "../../src/store/Database"
import { DatabaseTarget, parseDatabaseUrl } from "../../src/config/DatabaseUrl"
import { migrations } from "../../src/store/migrations"
import { postgres, sqliteFile, testDatabases } from "./databases"

const readTarget = (env: Record<string, string>) =>
  Effect.provideService(databaseTargetConfig, ConfigProvider.ConfigProvider, ConfigProvider.fromEnvRecord(env))

/** Every migration's numeric id (`<id>_<name>`), in order: all of them are applied. */
const MIGRATION_IDS = Object.keys(migrations).map((key) => Number(key.split("_")[0])).sort((a, b) => a - b)

const TABLES = [
  "short_term_memory",
  "persona_user_blocks",
  "enabled_channels",
  "guild_capabilities",
  "guild_image_tags",
  "guild_mcp_servers",
  "tool_usage",
  "api_key_cooldowns",
  "discord_shard_leases",
  "credential_keys",
  "credential_preferences",
  "server_turn_admissions",
  "usage_ledger"
]

describe("DATABASE_URL", () => {
  it.effect("defaults to the SQLite file ./data/loopcord.db", () =>
    Effect.gen(function* () {
      const target = yield* readTarget({})
      assert.deepStrictEqual(target, DatabaseTarget.SqliteFile({ path: "./data/loopcord.db" }))
    })
  )

  it("reads sqlite:PATH, sqlite:///abs, sqlite::memory: and both PostgreSQL schemes", () => {
    assert.deepStrictEqual(parseDatabaseUrl("sqlite:db/bot.db"), Result.succeed(DatabaseTarget.SqliteFile({ path: "db/bot.db" })))
    assert.deepStrictEqual(parseDatabaseUrl("sqlite:///var/lib/bot.db"), Result.succeed(DatabaseTarget.SqliteFile({ path: "/var/lib/bot.db" })))
    assert.deepStrictEqual(parseDatabaseUrl(" sqlite::memory: "), Result.succeed(DatabaseTarget.SqliteMemory()))
    for (const url of ["postgres://u:secret@db:5432/bot", "postgresql://db/bot", "POSTGRES://db/bot"]) {
      const parsed = parseDatabaseUrl(url)
      assert.isTrue(Result.isSuccess(parsed) && parsed.success._tag === "Postgres" && Redacted.value(parsed.success.url) === url)
    }
  })

  it.effect("an unknown scheme or an empty sqlite path fails start-up with one line naming DATABASE_URL", () =>
    Effect.gen(function* () {
      for (const bad of ["mysql://root:hunter2@db/bot", "sqlite:", "just-a-file.db"]) {
        const error = yield* Effect.flip(readTarget({ DATABASE_URL: bad }))
        const line = String(error)
        assert.include(line, "DATABASE_URL")
        assert.notInclude(line, "\n")
        // The URL may carry a password: it is never echoed back.
        assert.notInclude(line, "hunter2")
      }
      assert.include(String(yield* Effect.flip(readTarget({ DATABASE_URL: "mysql://x" }))), 'scheme "mysql:"')
    })
  )
})

describe("Database", () => {
  for (const database of testDatabases) {
    describe(database.name, () => {
      it.effect("migrates every table and re-running the migrations changes nothing", () =>
        Effect.gen(function* () {
          const target = yield* database.target
          const check = Effect.gen(function* () {
            const sql = yield* SqlClient.SqlClient
            for (const table of TABLES) {
              const rows = yield* sql`SELECT COUNT(*) AS n FROM ${sql(table)}`
              assert.strictEqual(Number(rows[0]?.["n"]), 0, table)
            }
            const versions = yield* sql`SELECT migration_id FROM loopcord_migrations`
            assert.deepStrictEqual(versions.map((row) => Number(row["migration_id"])).sort((a, b) => a - b), MIGRATION_IDS)
            assert.deepStrictEqual(yield* Database.migrate, [])
          })
          yield* Effect.provide(check, Database.layer(target))
          // A second start on the same database (a restart, or a second process) is a no-op.
          yield* Effect.provide(check, Database.layer(target))
        })
      )
    })
  }

  it.effect("a SQLite file keeps its data across restarts and its directory is created", () =>
    Effect.gen(function* () {
      const target = yield* sqliteFile.target
      const write = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO enabled_channels (guild_id, channel_id, enabled_at) VALUES ('g', 'c', 1)`
      )
      const read = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT channel_id FROM enabled_channels`)
      yield* Effect.provide(write, Database.layer(target))
      const rows = yield* Effect.provide(read, Database.layer(target))
      assert.deepStrictEqual(rows, [{ channel_id: "c" }])
    })
  )

  it.live("two processes starting at once on one PostgreSQL database both come up migrated", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const target = yield* postgres.target
        const start = Effect.provide(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT migration_id FROM loopcord_migrations`),
          Database.layer(target)
        )
        const [first, second] = yield* Effect.all([start, start], { concurrency: 2 })
        assert.deepStrictEqual(first?.map((row) => Number(row["migration_id"])).sort((a, b) => a - b), MIGRATION_IDS)
        assert.deepStrictEqual(second?.map((row) => Number(row["migration_id"])).sort((a, b) => a - b), MIGRATION_IDS)
      })
    )
  )

  it.effect("an unreachable PostgreSQL server fails start-up with a DatabaseError naming DATABASE_URL", () =>
    Effect.gen(function* () {
      // Port 9 (discard) on loopback: nothing listens there in CI.
      const target = DatabaseTarget.Postgres({ url: Redacted.make("postgres://postgres:s3cret@127.0.0.1:9/test") })
      const error = yield* Effect.flip(Effect.provide(Effect.void, Database.layer(target)))
      assert.strictEqual(error._tag, "DatabaseError")
      assert.include(error.message, "DATABASE_URL (PostgreSQL 127.0.0.1:9/test)")
      assert.notInclude(error.message, "s3cret")
    })
  )

  it.effect("a SQLite path that cannot be created fails start-up with a DatabaseError", () =>
    Effect.gen(function* () {
      const target = yield* sqliteFile.target
      assert.strictEqual(target._tag, "SqliteFile")
      if (target._tag !== "SqliteFile") return
      // Create the database file, then ask for a database *inside* it: its parent is a file.
      yield* Effect.provide(Effect.void, Database.layer(target))
      const nested = DatabaseTarget.SqliteFile({ path: `${target.path}/inner/bot.db` })
      const error = yield* Effect.flip(Effect.provide(Effect.void, Database.layer(nested)))
      assert.strictEqual(error._tag, "DatabaseError")
      assert.include(error.message, "DATABASE_URL (SQLite file")
    })
  )
})
