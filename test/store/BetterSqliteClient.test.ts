import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as BetterSqliteClient from "../../src/store/sqlite/BetterSqliteClient"

const tempDirectory = Effect.acquireRelease(
  Effect.promise(() => mkdtemp(join(tmpdir(), "loopcord-sqlite-"))),
  (directory) => Effect.promise(() => rm(directory, { recursive: true, force: true }))
)

const clientOn = (filename: string) =>
  Layer.effect(SqlClient.SqlClient, BetterSqliteClient.make({ filename })).pipe(Layer.provide(Reactivity.layer))

const withTable = Effect.flatMap(SqlClient.SqlClient, (sql) => sql`CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT NOT NULL)`)

const names = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ readonly name: string }>`SELECT name FROM t ORDER BY id`, (rows) => rows.map((row) => row.name)))

describe("BetterSqliteClient (the SQLite SqlClient over better-sqlite3)", () => {
  it.effect("a database file is switched to write-ahead logging; :memory: keeps its own journal", () =>
    Effect.gen(function*() {
      const directory = yield* tempDirectory
      const mode = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly journal_mode: string }>`PRAGMA journal_mode`)
      assert.deepStrictEqual(yield* Effect.provide(mode, clientOn(join(directory, "wal.db"))), [{ journal_mode: "wal" }])
      assert.deepStrictEqual(yield* Effect.provide(mode, clientOn(":memory:")), [{ journal_mode: "memory" }])
    }))

  it.effect("a transaction commits as a whole, or rolls back as a whole when it fails; a nested one rolls back alone", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* withTable
      yield* sql.withTransaction(Effect.andThen(sql`INSERT INTO t (name) VALUES ('a')`, sql`INSERT INTO t (name) VALUES ('b')`))
      const failed = yield* Effect.exit(
        sql.withTransaction(Effect.andThen(sql`INSERT INTO t (name) VALUES ('c')`, Effect.fail("stop")))
      )
      assert.isTrue(Exit.isFailure(failed))
      assert.deepStrictEqual(yield* names, ["a", "b"])
      yield* sql.withTransaction(
        Effect.gen(function*() {
          yield* sql`INSERT INTO t (name) VALUES ('d')`
          yield* Effect.exit(sql.withTransaction(Effect.andThen(sql`INSERT INTO t (name) VALUES ('e')`, Effect.fail("inner"))))
        })
      )
      assert.deepStrictEqual(yield* names, ["a", "b", "d"])
    }).pipe(Effect.provide(clientOn(":memory:"))))

  it.effect("statements of other fibers wait for a transaction to end (one connection, shared)", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* withTable
      const seen = yield* Effect.all(
        [
          sql.withTransaction(
            Effect.gen(function*() {
              yield* sql`INSERT INTO t (name) VALUES ('inside')`
              yield* Effect.yieldNow
              yield* sql`INSERT INTO t (name) VALUES ('still inside')`
            })
          ),
          Effect.andThen(Effect.yieldNow, names)
        ],
        { concurrency: 2 }
      )
      // The reader ran after the commit, never between the two inserts.
      assert.deepStrictEqual(seen[1], ["inside", "still inside"])
    }).pipe(Effect.provide(clientOn(":memory:"))))

  it.effect("a bad statement fails with a typed SqlError, and the client goes on", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* withTable
      const syntax = yield* Effect.flip(sql`SELEC nothing`)
      assert.strictEqual(syntax._tag, "SqlError")
      assert.strictEqual(syntax.message, "Failed to prepare statement")
      yield* sql`INSERT INTO t (id, name) VALUES (1, 'x')`
      const duplicate = yield* Effect.flip(sql`INSERT INTO t (id, name) VALUES (1, 'y')`)
      // A primary key conflict (SQLITE_CONSTRAINT_PRIMARYKEY) is a constraint error of its own kind.
      assert.strictEqual(duplicate.reason._tag, "ConstraintError")
      // A table created after a failed prepare is found: failures are not cached.
      assert.strictEqual((yield* Effect.flip(sql`SELECT * FROM later`)).message, "Failed to prepare statement")
      yield* sql`CREATE TABLE later (x INTEGER)`
      assert.deepStrictEqual(yield* sql`SELECT * FROM later`, [])
      assert.deepStrictEqual(yield* names, ["x"])
    }).pipe(Effect.provide(clientOn(":memory:"))))

  it.effect("values, raw results and safe integers", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* withTable
      yield* sql`INSERT INTO t (name) VALUES ('a'), ('b')`
      assert.deepStrictEqual(yield* sql`SELECT id, name FROM t ORDER BY id`.values, [[1, "a"], [2, "b"]])
      // The same statement reads objects again afterwards.
      assert.deepStrictEqual(yield* sql`SELECT id, name FROM t ORDER BY id`, [{ id: 1, name: "a" }, { id: 2, name: "b" }])
      const raw = (yield* sql`UPDATE t SET name = 'c'`.raw) as { readonly changes: number }
      assert.strictEqual(raw.changes, 2)
      const big = yield* sql`SELECT 9007199254740993 AS n`.pipe(Effect.provideService(SqlClient.SafeIntegers, true))
      assert.deepStrictEqual(big, [{ n: 9007199254740993n }])
    }).pipe(Effect.provide(clientOn(":memory:"))))

  it.effect("a file that cannot be opened fails with a SqlError saying why", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        Effect.scoped(BetterSqliteClient.make({ filename: join(tmpdir(), "no-such-directory-loopcord", "x.db") }))
      ).pipe(Effect.provide(Reactivity.layer))
      assert.strictEqual(error._tag, "SqlError")
      assert.strictEqual(error.reason._tag, "ConnectionError")
      assert.include(error.message, "directory does not exist")
    }))
})
