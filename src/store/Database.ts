import * as Reactivity from "effect/reactivity/Reactivity"
import * as FileSystem from "effect/FileSystem"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as Migrator from "effect/sql/Migrator"
import * as SqlClient from "effect/sql/SqlClient"
import { Context, Data, Effect, Layer, Schedule } from "effect"
import { dirname } from "node:path"
import { StoreConfig } from "../config/StoreConfig"
import { type DatabaseTarget, DatabaseTarget as Target, describeTarget } from "../config/DatabaseUrl"
import { MIGRATIONS_TABLE, migrations } from "./migrations"

/** The database could not be opened or migrated: start-up stops with this one line. */
export class DatabaseError extends Data.TaggedError("DatabaseError")<{
  readonly target: string
  readonly detail: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `DATABASE_URL (${this.target}): ${this.detail}`
  }
}

const causeText = (cause: unknown): string => {
  const inner = cause instanceof Error && "cause" in cause && cause.cause instanceof Error ? cause.cause : cause
  return inner instanceof Error ? inner.message : String(inner)
}

// Each driver is imported only for a URL that names it: the PostgreSQL client never loads for
// SQLite, and better-sqlite3 (a native module) never loads for PostgreSQL.
const sqliteClient = (filename: string) =>
  Effect.promise(() => import("./sqlite/BetterSqliteClient")).pipe(
    Effect.flatMap((BetterSqliteClient) => BetterSqliteClient.make({ filename })),
    Effect.map((client) => Context.make(SqlClient.SqlClient, client)),
    // A throw the client did not expect while opening is still a start-up failure, not a crash.
    Effect.catchDefect((defect) => Effect.fail(defect))
  )

const prepareSqliteDirectory = (path: string) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(dirname(path), { recursive: true })
  }).pipe(Effect.provide(NodeFileSystem.layer))

const clientContext = (target: DatabaseTarget) =>
  Target.$match(target, {
    SqliteMemory: () => sqliteClient(":memory:"),
    SqliteFile: ({ path }) => Effect.andThen(prepareSqliteDirectory(path), sqliteClient(path)),
    Postgres: ({ url }) =>
      Effect.promise(() => import("@effect/sql-pg/PgClient")).pipe(
        Effect.flatMap((PgClient) => PgClient.make({ url, applicationName: "loopcord" })),
        // The pool connects on first use: one round trip now makes an unreachable server a
        // start-up failure of its own, not a failed migration.
        Effect.tap((client) => client`SELECT 1`),
        Effect.map((client) => Context.make(SqlClient.SqlClient, client))
      )
  })

/** A SqlClient for the target, without migrations (tests of the migrations use it). */
export const sqlClientLayer = (target: DatabaseTarget): Layer.Layer<SqlClient.SqlClient, DatabaseError> =>
  Layer.effectContext(
    clientContext(target).pipe(
      Effect.mapError(
        (cause) => new DatabaseError({ target: describeTarget(target), detail: `cannot open: ${causeText(cause)}`, cause })
      )
    )
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * Brings the schema up to date. Idempotent; on PostgreSQL the Migrator locks its table, and a
 * process that loses the race to create that table simply retries.
 */
export const migrate: Effect.Effect<ReadonlyArray<readonly [id: number, name: string]>, DatabaseError, SqlClient.SqlClient> =
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })
    return yield* run.pipe(
      Effect.retry({
        schedule: Schedule.spaced("200 millis"),
        times: 3,
        while: () => sql.onDialectOrElse({ pg: () => true, orElse: () => false })
      }),
      Effect.mapError((cause) => new DatabaseError({ target: "migrations", detail: `migration failed: ${causeText(cause)}`, cause }))
    )
  })

/** The database named by the target, migrated: provides the SqlClient every store uses. */
export const layer = (target: DatabaseTarget): Layer.Layer<SqlClient.SqlClient, DatabaseError> =>
  Layer.effectDiscard(
    migrate.pipe(
      Effect.tap((applied) =>
        applied.length === 0
          ? Effect.void
          : Effect.logInfo(`Database migrated to version ${applied[applied.length - 1]?.[0]}`).pipe(
              Effect.annotateLogs("database", describeTarget(target))
            )
      )
    )
  ).pipe(Layer.provideMerge(sqlClientLayer(target)))

/** The database named by `DATABASE_URL`. */
export const layerConfig: Layer.Layer<SqlClient.SqlClient, DatabaseError, StoreConfig> = Layer.unwrap(
  Effect.map(StoreConfig, (settings) => layer(settings.database))
)

/** A fresh, migrated in-memory SQLite database (tests, the terminal demo). */
export const layerMemory: Layer.Layer<SqlClient.SqlClient, DatabaseError> = layer(Target.SqliteMemory())
