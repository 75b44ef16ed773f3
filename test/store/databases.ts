import * as Reactivity from "effect/reactivity/Reactivity"
import * as Migrator from "effect/sql/Migrator"
import type { SqlClient } from "effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted, type Scope } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir, userInfo } from "node:os"
import { join } from "node:path"
import * as Database from "../../src/store/Database"
import { DatabaseTarget } from "../../src/config/DatabaseUrl"
import { MIGRATIONS_TABLE, migrations } from "../../src/store/migrations"

/**
 * The databases every store test runs against. PostgreSQL is the loopback server CI starts
 * (127.0.0.1:5432, database `test`, trust auth); each use gets a schema of its own, dropped
 * afterwards, so concurrent runs never see each other. An unreachable server fails the test
 * with a message saying so: it is never skipped.
 */
export interface TestDatabase {
  readonly name: string
  /** A fresh database (not migrated), released with the scope. */
  readonly target: Effect.Effect<DatabaseTarget, Database.DatabaseError, Scope.Scope>
}

/** A fresh, migrated database for one test. */
export const migratedLayer = (database: TestDatabase): Layer.Layer<SqlClient.SqlClient, Database.DatabaseError> =>
  Layer.unwrap(Effect.map(database.target, Database.layer))

/**
 * Applies only the migrations up to `lastId` (`"1_initial_schema"`): the database as an older
 * release left it, for seeding rows before `Database.migrate` runs the rest.
 */
export const migrateUpTo = (lastId: string) => {
  const ids = Object.keys(migrations)
  const kept = ids.slice(0, ids.indexOf(lastId) + 1)
  if (kept.length === 0) return Effect.die(new Error(`no migration ${lastId}`))
  return Migrator.make({})({
    loader: Migrator.fromRecord(Object.fromEntries(kept.flatMap((id) => (migrations[id] === undefined ? [] : [[id, migrations[id]]])))),
    table: MIGRATIONS_TABLE
  })
}

const PG_HOST = "127.0.0.1:5432"
const PG_DATABASE = "test"
const PG_ROLES = [...new Set(["postgres", userInfo().username])]

const pgUrl = (role: string, schema?: string): string =>
  `postgres://${encodeURIComponent(role)}@${PG_HOST}/${PG_DATABASE}` +
  (schema === undefined ? "" : `?options=${encodeURIComponent(`-c search_path=${schema}`)}`)

const pgRun = (role: string, statement: string) =>
  Effect.scoped(
    Effect.flatMap(PgClient.make({ url: Redacted.make(pgUrl(role)), connectTimeout: "5 seconds" }), (client) =>
      client.unsafe(statement)
    )
  ).pipe(Effect.provide(Reactivity.layer))

/** The first role trust auth accepts, or a failure that says what is missing. */
const pgRole = Effect.firstSuccessOf(PG_ROLES.map((role) => Effect.as(pgRun(role, "SELECT 1"), role))).pipe(
  Effect.mapError(
    (error) =>
      new Database.DatabaseError({
        target: `PostgreSQL ${PG_HOST}/${PG_DATABASE}`,
        detail:
          `the store tests need it (roles tried: ${PG_ROLES.join(", ")}; trust auth): ${error.message}` +
          (error.cause instanceof Error ? ` (${error.cause.message})` : ""),
        cause: error
      })
  )
)

let schemaCounter = 0

export const postgres: TestDatabase = {
  name: "PostgreSQL",
  target: Effect.gen(function* () {
    const role = yield* pgRole
    schemaCounter += 1
    const schema = `loopcord_test_${process.pid}_${Date.now().toString(36)}_${schemaCounter}`
    yield* Effect.acquireRelease(pgRun(role, `CREATE SCHEMA "${schema}"`), () =>
      pgRun(role, `DROP SCHEMA "${schema}" CASCADE`).pipe(Effect.orDie)
    ).pipe(
      Effect.mapError(
        (error) => new Database.DatabaseError({ target: "PostgreSQL test schema", detail: error.message, cause: error })
      )
    )
    return DatabaseTarget.Postgres({ url: Redacted.make(pgUrl(role, schema)) })
  })
}

export const sqliteMemory: TestDatabase = {
  name: "SQLite :memory:",
  target: Effect.succeed(DatabaseTarget.SqliteMemory())
}

export const sqliteFile: TestDatabase = {
  name: "SQLite file",
  target: Effect.acquireRelease(
    Effect.promise(() => mkdtemp(join(tmpdir(), "loopcord-store-"))),
    (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
  ).pipe(
    // A nested path: the store creates missing directories on first start.
    Effect.map((directory) => DatabaseTarget.SqliteFile({ path: join(directory, "nested", "loopcord.db") }))
  )
}

export const testDatabases: ReadonlyArray<TestDatabase> = [sqliteMemory, sqliteFile, postgres]
