import { assert, describe, it } from "@effect/vitest"
import * as SqlClient from "effect/sql/SqlClient"
import { Duration, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { TokenUsage } from "../../src/domain/TokenUsage"
import { UsageLedger } from "../../src/loop/UsageLedger"
import { DAY_MS } from "../../src/store/ServerTurnAdmissionStore"
import { MAX_USAGE_DAYS, UsageLedgerStore } from "../../src/store/UsageLedgerStore"
import { storesOnHangingDatabase } from "./hangingDatabase"
import { makeLogCapture } from "../support/tools/logCapture"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

const usage = (input: number, output: number) => TokenUsage({ inputTokens: input, outputTokens: output, totalTokens: input + output })

for (const database of testDatabases) {
  describe(`UsageLedgerStore on ${database.name}`, () => {
    it.effect("turns and tokens add up per user, server, UTC day and credential source", () =>
      Effect.gen(function*() {
        const ledger = yield* UsageLedgerStore
        yield* ledger.record({ guildId: "g1", userId: "alice", source: "personal", usage: usage(100, 20) })
        yield* ledger.record({ guildId: "g1", userId: "alice", source: "personal", usage: usage(50, 5) })
        yield* ledger.record({ guildId: "g1", userId: "alice", source: "server", usage: undefined })
        yield* ledger.record({ guildId: "g2", userId: "alice", source: "operator", usage: usage(10, 1) })
        yield* ledger.record({ guildId: "g1", userId: "bob", source: "server", usage: usage(7, 3) })
        yield* TestClock.adjust(Duration.millis(DAY_MS))
        yield* ledger.record({ guildId: undefined, userId: "alice", source: "operator", usage: usage(1, 1) })

        const aliceRows = yield* ledger.totals({ userId: "alice" }, 7)
        assert.deepStrictEqual(aliceRows, [
          { day: 1, source: "operator", turns: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 },
          { day: 0, source: "operator", turns: 1, inputTokens: 10, outputTokens: 1, totalTokens: 11 },
          { day: 0, source: "personal", turns: 2, inputTokens: 150, outputTokens: 25, totalTokens: 175 },
          { day: 0, source: "server", turns: 1, inputTokens: 0, outputTokens: 0, totalTokens: 0 }
        ])
        const serverRows = yield* ledger.totals({ guildId: "g1" }, 7)
        assert.deepStrictEqual(serverRows, [
          { day: 0, source: "personal", turns: 2, inputTokens: 150, outputTokens: 25, totalTokens: 175 },
          { day: 0, source: "server", turns: 2, inputTokens: 7, outputTokens: 3, totalTokens: 10 }
        ])
        // Only the last `days` days are read back.
        assert.deepStrictEqual((yield* ledger.totals({ userId: "alice" }, 1)).map((row) => row.day), [1])
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("[issue 25] rows older than the 90-day window are dropped (the first write of a day prunes)", () =>
      Effect.gen(function*() {
        const ledger = yield* UsageLedgerStore
        const sql = yield* SqlClient.SqlClient
        const daysStored = Effect.map(
          sql<{ readonly day: unknown }>`SELECT DISTINCT day FROM usage_ledger ORDER BY day`,
          (rows) => rows.map((row) => Number(row.day))
        )
        yield* ledger.record({ guildId: "g1", userId: "alice", source: "server", usage: usage(1, 1) })
        yield* TestClock.adjust(Duration.millis(DAY_MS))
        yield* ledger.record({ guildId: "g2", userId: "bob", source: "personal", usage: usage(2, 2) })
        // Day 89: day 0 is still the oldest day of the window, and read back.
        yield* TestClock.adjust(Duration.millis((MAX_USAGE_DAYS - 2) * DAY_MS))
        yield* ledger.record({ guildId: "g1", userId: "carol", source: "server", usage: usage(3, 3) })
        assert.deepStrictEqual(yield* daysStored, [0, 1, MAX_USAGE_DAYS - 1])
        assert.deepStrictEqual((yield* ledger.totals({ guildId: "g1" }, MAX_USAGE_DAYS)).map((row) => row.day), [MAX_USAGE_DAYS - 1, 0])
        // Day 90: day 0 fell out of the window, and out of the table with the day's first write.
        yield* TestClock.adjust(Duration.millis(DAY_MS))
        yield* ledger.record({ guildId: "g1", userId: "alice", source: "server", usage: usage(4, 4) })
        assert.deepStrictEqual(yield* daysStored, [1, MAX_USAGE_DAYS - 1, MAX_USAGE_DAYS])
        // Long after: only the newest day is left.
        yield* TestClock.adjust(Duration.millis(400 * DAY_MS))
        yield* ledger.record({ guildId: "g3", userId: "dave", source: "operator", usage: undefined })
        assert.deepStrictEqual(yield* daysStored, [MAX_USAGE_DAYS + 400])
      }).pipe(Effect.provide(storesOn(database))))

    it.effect("concurrent turns never lose a count", () =>
      Effect.gen(function*() {
        const ledger = yield* UsageLedgerStore
        yield* Effect.all(
          Array.from({ length: 25 }, () => ledger.record({ guildId: "g1", userId: "alice", source: "server", usage: usage(2, 1) })),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(yield* ledger.totals({ guildId: "g1" }, 7), [
          { day: 0, source: "server", turns: 25, inputTokens: 50, outputTokens: 25, totalTokens: 75 }
        ])
      }).pipe(Effect.provide(storesOn(database))))
  })
}

describe("UsageLedger over the store (the loop's port)", () => {
  it.effect("a ledger that cannot be written is logged, never the turn's failure", () =>
    Effect.gen(function*() {
      const { layer } = yield* storesOnHangingDatabase
      const logs = yield* makeLogCapture
      const ledger = yield* Effect.provide(UsageLedger, UsageLedgerStore.ledgerLayer.pipe(Layer.provide(layer)))
      const fiber = yield* Effect.forkChild(logs.capture(ledger.record({ guildId: "g1", userId: "alice", source: "server", usage: undefined })))
      yield* TestClock.adjust("10 seconds")
      yield* Fiber.await(fiber)
      assert.strictEqual((yield* logs.matching("could not record a turn's usage")).length, 1)
    }))
})
