import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { keepShardLeases } from "../../src/ops/ShardLeases"
import { ShardLeaseStore } from "../../src/store/ShardLeaseStore"
import { makeLogCapture } from "../support/tools/logCapture"
import { migratedLayer, testDatabases } from "./databases"

const storeOn = (database: (typeof testDatabases)[number]) => ShardLeaseStore.layer.pipe(Layer.provide(migratedLayer(database)))

for (const database of testDatabases) {
  describe(`shard leases on ${database.name}`, () => {
    it.effect("renew reports other live holders of the same shards and of another shard count; stale and released leases are not", () =>
      Effect.gen(function*() {
        const store = yield* ShardLeaseStore
        yield* TestClock.setTime(1_000_000)
        assert.deepStrictEqual(yield* store.renew("host-a", [0, 1], 4, 35_000), [])
        assert.deepStrictEqual(yield* store.renew("host-b", [2, 3], 4, 35_000), [], "disjoint shard lists")
        yield* TestClock.adjust("5 seconds")
        const overlap = yield* store.renew("host-c", [1, 2], 4, 35_000)
        assert.deepStrictEqual(
          overlap.map((conflict) => [conflict.shardId, conflict.holder, conflict.ageMs]).sort(),
          [[1, "host-a", 5000], [2, "host-b", 5000]]
        )
        const miscounted = yield* store.renew("host-d", [0], 2, 35_000)
        assert.includeMembers(miscounted.map((conflict) => conflict.shardCount), [4])
        yield* store.release("host-c")
        yield* store.release("host-d")
        yield* TestClock.adjust("40 seconds")
        assert.deepStrictEqual(yield* store.renew("host-e", [1], 4, 35_000), [], "host-a's lease went stale")
      }).pipe(Effect.provide(storeOn(database))))
  })
}

describe("keepShardLeases (the bot's heartbeat)", () => {
  it.effect("two processes given the same shard: each logs the overlap once, naming the other; disjoint ones stay quiet", () =>
    Effect.gen(function*() {
      const logs = yield* makeLogCapture
      yield* logs.capture(Effect.gen(function*() {
        yield* keepShardLeases({ ids: [0, 1], count: 4 }, "host-a")
        yield* keepShardLeases({ ids: [2, 3], count: 4 }, "host-b")
        yield* TestClock.adjust("1 second")
        yield* keepShardLeases({ ids: [3], count: 4 }, "host-c")
        // Heartbeats go on (every 10 s); the overlap is reported once, not on every beat.
        for (let beat = 0; beat < 5; beat++) {
          yield* TestClock.adjust("10 seconds")
          yield* Effect.yieldNow
        }
      }))
      const errors = yield* logs.matching("DISCORD_SHARD_IDS overlap")
      const messages = errors.map((line) => line.message).sort()
      assert.strictEqual(messages.length, 2, JSON.stringify(messages))
      assert.include(messages.join("\n"), "shard 3/4 is also run by host-b")
      assert.include(messages.join("\n"), "shard 3/4 is also run by host-c")
      assert.lengthOf(yield* logs.matching("host-a"), 0, "host-a overlaps with nobody")
    }).pipe(Effect.provide(storeOn(testDatabases[0]!))))
})
