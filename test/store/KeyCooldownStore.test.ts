import * as SqlClient from "effect/sql/SqlClient"
import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { TestClock } from "effect/testing"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import * as KeyCooldownStore from "../../src/store/KeyCooldownStore"
import { makeLogCapture } from "../support/tools/logCapture"
import { migratedLayer, testDatabases } from "./databases"
import { hangingSqlClient } from "./hangingDatabase"

/** A KeyPool whose rests are shared through `sql`, over `keys` (each host lists its keys in its own order). */
const poolOver = (sql: Context.Context<SqlClient.SqlClient>, keys: ReadonlyArray<string>) =>
  Effect.map(
    Layer.build(KeyPool.Default.pipe(
      Layer.provide(KeyCooldownStore.layer),
      Layer.provide(Layer.merge(RoutePlan.make(["m"], keys), Layer.succeedContext(sql)))
    )),
    (context) => Context.get(context, KeyPool)
  )

/** Polls `read` in real time (database I/O is real; the pool's timers are on the TestClock). */
const poll = <A, E, R>(read: Effect.Effect<A, E, R>, accept: (value: A) => boolean, tries: number) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < tries; attempt++) {
      const value = yield* read
      if (accept(value)) return true
      yield* TestClock.withLive(Effect.sleep(Duration.millis(10)))
    }
    return false
  })

const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, accept: (value: A) => boolean, what: string) =>
  Effect.flatMap(poll(read, accept, 500), (done) => (done ? Effect.void : Effect.die(new Error(`timed out waiting for ${what}`))))

/** The rests the database holds for `keys`, read directly. */
const storedRests = (sql: Context.Context<SqlClient.SqlClient>, keys: ReadonlyArray<string>) =>
  KeyCooldownStore.make.pipe(
    Effect.flatMap((store) => store.resting),
    Effect.provide(Layer.merge(RoutePlan.make(["m"], keys), Layer.succeedContext(sql)))
  )

/**
 * Background refreshes (every 2 s on the Clock) run until one shows what `accept` looks for; each
 * query lands in real time (a slow one may be cut by its 2 s deadline when the clock moves on).
 */
const refreshed = (pool: KeyPool["Service"], accept: (resting: ReadonlyMap<number, number>) => boolean) =>
  Effect.gen(function*() {
    for (let round = 0; round < 10; round++) {
      yield* TestClock.adjust("2 seconds")
      if (yield* poll(pool.snapshot, accept, 100)) return
    }
    return yield* Effect.die(new Error(`no refresh showed the expected rests: ${JSON.stringify([...(yield* pool.snapshot)])}`))
  })

for (const database of testDatabases) {
  describe(`shared API-key cooldowns on ${database.name}`, () => {
    it.effect("a key rate-limited on one host rests on the other, whatever the order of its keys", () =>
      Effect.gen(function*() {
        const sql = yield* Layer.build(migratedLayer(database))
        const hostA = yield* poolOver(sql, ["key-a", "key-b"])
        const hostB = yield* poolOver(sql, ["key-b", "key-a"])
        yield* hostA.recordError(0, "rate_limit")
        // The write is in the background: the turn that hit the 429 did not wait for it.
        yield* eventually(storedRests(sql, ["key-a"]), (rests) => rests.has(0), "the write")
        yield* refreshed(hostB, (resting) => resting.has(1))
        assert.deepStrictEqual(yield* hostB.next(2, new Set()), Option.some(0), "host B skips key-a (its #1) and uses key-b")
        // The rest ends for both after 60 s.
        yield* TestClock.adjust("60 seconds")
        assert.strictEqual((yield* hostB.snapshot).size, 0)
        assert.strictEqual((yield* hostA.snapshot).size, 0)
      }))

    it.effect("a key that answers again leaves the shared store; a longer rest is not shortened; keys are never stored", () =>
      Effect.gen(function*() {
        const sql = yield* Layer.build(migratedLayer(database))
        const hostA = yield* poolOver(sql, ["key-a", "key-b"])
        const hostB = yield* poolOver(sql, ["key-a", "key-b"])
        const hostC = yield* poolOver(sql, ["key-a", "key-b"])
        yield* hostA.recordError(1, "api_error")
        yield* eventually(storedRests(sql, ["key-a", "key-b"]), (rests) => rests.has(1), "the write")
        yield* refreshed(hostB, (resting) => resting.has(1))
        yield* refreshed(hostC, (resting) => resting.has(1))
        yield* hostB.recordSuccess(1)
        yield* eventually(storedRests(sql, ["key-a", "key-b"]), (rests) => !rests.has(1), "the clear")
        yield* refreshed(hostC, (resting) => !resting.has(1))
        assert.isTrue((yield* hostA.snapshot).has(1), "the host that recorded the rest keeps it until it ends")

        const store = yield* KeyCooldownStore.make.pipe(Effect.provide(Layer.merge(RoutePlan.make(["m"], ["key-a"]), Layer.succeedContext(sql))))
        yield* store.rest(0, 300_000)
        yield* store.rest(0, 120_000)
        assert.deepStrictEqual(yield* store.resting, new Map([[0, 300_000]]))
        const rows = yield* Effect.flatMap(SqlClient.SqlClient, (client) => client`SELECT key_fingerprint FROM api_key_cooldowns`).pipe(Effect.provide(sql))
        assert.notInclude(JSON.stringify(rows), "key-a", "only fingerprints are stored")
      }))
  })
}

describe("shared API-key cooldowns when the database does not answer", () => {
  it.effect("the pool rests the key locally at once, gives the write up after 2 s and warns once", () =>
    Effect.gen(function*() {
      const { client } = yield* hangingSqlClient
      const logs = yield* makeLogCapture
      const pool = yield* logs.capture(poolOver(Context.make(SqlClient.SqlClient, client), ["key-a", "key-b"]))
      yield* logs.capture(pool.recordError(0, "rate_limit"))
      assert.deepStrictEqual(yield* pool.next(2, new Set()), Option.some(1), "no waiting on the database")
      yield* TestClock.adjust("10 seconds")
      yield* logs.capture(pool.recordError(1, "rate_limit"))
      yield* TestClock.adjust("10 seconds")
      const warnings = yield* logs.matching("Shared key cooldowns unavailable")
      assert.strictEqual(warnings.length, 1)
    }))
})
