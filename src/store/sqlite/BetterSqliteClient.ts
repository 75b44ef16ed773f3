import Sqlite from "better-sqlite3"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import { classifySqliteError, ConnectionError, SqlError } from "effect/sql/SqlError"
import * as Statement from "effect/sql/Statement"
import { Duration, Effect, Scope, Semaphore, Stream } from "effect"

/**
 * A SqlClient over better-sqlite3: one synchronous connection to a file (or `:memory:`), shared
 * by every fiber through a semaphore, so a transaction holds the database until it ends.
 */
export interface BetterSqliteConfig {
  /** A path, or `:memory:`. Its directory must exist. */
  readonly filename: string
  readonly readonly?: boolean | undefined
  /** Prepared statements kept for reuse (default 200, least recently used dropped first). */
  readonly prepareCacheSize?: number | undefined
  /** How long a prepared statement is kept (default 10 minutes). */
  readonly prepareCacheTTL?: Duration.Input | undefined
  /** Keeps SQLite's rollback journal instead of switching the file to write-ahead logging. */
  readonly disableWAL?: boolean | undefined
}

/** The connection, plus what the shared acquirers ask it: is a transaction open. */
interface BetterSqliteConnection extends Connection {
  readonly inTransaction: boolean
}

const failure = (cause: unknown, operation: string, message: string): SqlError =>
  new SqlError({ reason: classifySqliteError(cause, { message, operation }) })

/** Runs a better-sqlite3 call, which throws on failure, as an Effect failing with SqlError. */
const attempt = <A>(operation: string, message: string, run: () => A): Effect.Effect<A, SqlError> =>
  Effect.try({ try: run, catch: (cause) => failure(cause, operation, message) })

/**
 * A small LRU of prepared statements keyed by their SQL. Preparing parses and plans the
 * statement; the stores send the same few dozen statements over and over.
 */
const makePrepareCache = (db: Sqlite, capacity: number, ttlMillis: number) => {
  const entries = new Map<string, { readonly statement: Sqlite.Statement; readonly preparedAt: number }>()
  return (sql: string): Sqlite.Statement => {
    const now = Date.now()
    const hit = entries.get(sql)
    if (hit !== undefined) {
      entries.delete(sql)
      if (now - hit.preparedAt < ttlMillis) {
        entries.set(sql, hit)
        return hit.statement
      }
    }
    // A statement that does not prepare (a syntax error, a table not created yet) is not kept.
    const statement = db.prepare(sql)
    entries.set(sql, { statement, preparedAt: now })
    if (entries.size > capacity) {
      const oldest = entries.keys().next()
      if (oldest.done !== true) entries.delete(oldest.value)
    }
    return statement
  }
}

const openDatabase = (config: BetterSqliteConfig) =>
  Effect.acquireRelease(
    Effect.try({
      try: () => {
        const db = new Sqlite(config.filename, { readonly: config.readonly ?? false })
        try {
          if (config.disableWAL !== true) db.pragma("journal_mode = WAL")
        } catch (cause) {
          db.close()
          throw cause
        }
        return db
      },
      catch: (cause) =>
        new SqlError({
          reason: new ConnectionError({
            cause,
            message: cause instanceof Error ? cause.message : String(cause),
            operation: "open"
          })
        })
    }),
    (db) => Effect.sync(() => db.close())
  )

const makeConnection = (db: Sqlite, config: BetterSqliteConfig): BetterSqliteConnection => {
  const prepared = makePrepareCache(
    db,
    config.prepareCacheSize ?? 200,
    Duration.toMillis(config.prepareCacheTTL ?? Duration.minutes(10))
  )

  /** Prepares (or reuses) the statement, then runs `use` on it; each step fails with its own SqlError. */
  const withStatement = <A>(statement: () => Sqlite.Statement, use: (prepared: Sqlite.Statement, safeIntegers: boolean) => A) =>
    Effect.flatMap(SqlClient.SafeIntegers, (safeIntegers) =>
      Effect.flatMap(attempt("prepare", "Failed to prepare statement", statement), (prepared) =>
        attempt("execute", "Failed to execute statement", () => use(prepared, safeIntegers))))

  /** Rows of a reader, `[]` for a write (or better-sqlite3's run result when `raw`). */
  const run = (statement: () => Sqlite.Statement, params: ReadonlyArray<unknown>, raw: boolean) =>
    withStatement(statement, (prepared, safeIntegers): ReadonlyArray<object> => {
      if (!prepared.reader) {
        const result = prepared.run(...params)
        return raw ? (result as unknown as ReadonlyArray<object>) : []
      }
      prepared.safeIntegers(safeIntegers)
      return prepared.all(...params)
    })

  /** Rows as arrays of values; the statement goes back to objects afterwards (it is shared). */
  const runValues = (statement: () => Sqlite.Statement, params: ReadonlyArray<unknown>) =>
    withStatement(statement, (prepared, safeIntegers): ReadonlyArray<ReadonlyArray<unknown>> => {
      if (!prepared.reader) {
        prepared.run(...params)
        return []
      }
      prepared.safeIntegers(safeIntegers)
      prepared.raw(true)
      try {
        return prepared.all(...params) as ReadonlyArray<ReadonlyArray<unknown>>
      } finally {
        prepared.raw(false)
      }
    })

  const cached = (sql: string) => () => prepared(sql)
  const fresh = (sql: string) => () => db.prepare(sql)
  const transformed = <A extends object>(
    rows: Effect.Effect<ReadonlyArray<A>, SqlError>,
    transformRows: (<B extends object>(rows: ReadonlyArray<B>) => ReadonlyArray<B>) | undefined
  ) => (transformRows === undefined ? rows : Effect.map(rows, transformRows))

  return {
    get inTransaction() {
      return db.inTransaction
    },
    execute: (sql, params, transformRows) => transformed(run(cached(sql), params, false), transformRows),
    executeRaw: (sql, params) => run(cached(sql), params, true),
    executeValues: (sql, params) => runValues(cached(sql), params),
    executeValuesUnprepared: (sql, params) => runValues(fresh(sql), params),
    executeUnprepared: (sql, params, transformRows) => transformed(run(fresh(sql), params, false), transformRows),
    // better-sqlite3 reads synchronously: the rows are read at once and emitted one by one.
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(transformed(run(cached(sql), params, false), transformRows))
  }
}

/** Opens the database for the scope and builds the SqlClient on it (needs Reactivity, as every SqlClient). */
export const make = (
  config: BetterSqliteConfig
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const db = yield* openDatabase(config)
    const connection = makeConnection(db, config)
    const semaphore = yield* Semaphore.make(1)
    const shared = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore,
      isTransaction: (conn) => conn.inTransaction
    })
    return yield* SqlClient.make({
      acquirer: shared.acquirer,
      borrower: shared.borrower,
      transactionAcquirer: shared.transactionAcquirer,
      onCommitFailure: shared.onCommitFailure,
      isTransaction: shared.isTransaction,
      compiler: Statement.makeCompilerSqlite(),
      driver: "better-sqlite3",
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`,
      spanAttributes: [["db.system.name", "sqlite"]]
    })
  })
