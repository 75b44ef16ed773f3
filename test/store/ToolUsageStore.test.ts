import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { ToolUsageStore } from "../../src/store/ToolUsageStore"
import { ToolUsageStats } from "../../src/tools/ToolUsageStats"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

for (const database of testDatabases) {
  describe(`ToolUsageStore on ${database.name}`, () => {
    it.effect("ToolUsageStats.record counts guild calls; DMs are not counted; topTools ranks them", () =>
      Effect.gen(function* () {
        const stats = yield* ToolUsageStats
        const store = yield* ToolUsageStore
        yield* TestClock.setTime(100)
        yield* stats.record("web_search", "g1")
        yield* stats.record("fetch_url", "g1")
        yield* TestClock.setTime(200)
        yield* stats.record("fetch_url", "g1")
        yield* stats.record("web_search", "g1")
        yield* stats.record("web_search", "g1")
        yield* stats.record("block_user", "g1")
        yield* stats.record("web_search", undefined)
        yield* stats.record("web_search", "g2")
        assert.deepStrictEqual(yield* store.topTools("g1"), [
          { toolName: "web_search", uses: 3, lastUsedAt: 200 },
          { toolName: "fetch_url", uses: 2, lastUsedAt: 200 },
          { toolName: "block_user", uses: 1, lastUsedAt: 200 }
        ])
        assert.deepStrictEqual((yield* store.topTools("g1", 1)).map((usage) => usage.toolName), ["web_search"])
        assert.deepStrictEqual(yield* store.topTools("g2"), [{ toolName: "web_search", uses: 1, lastUsedAt: 200 }])
        assert.deepStrictEqual(yield* store.topTools("dm"), [])
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("concurrent records never lose a count", () =>
      Effect.gen(function* () {
        const stats = yield* ToolUsageStats
        const store = yield* ToolUsageStore
        yield* Effect.all(
          Array.from({ length: 25 }, () => stats.record("web_search", "g1")),
          { concurrency: 5 }
        )
        assert.strictEqual((yield* store.topTools("g1"))[0]?.uses, 25)
      }).pipe(Effect.provide(storesOn(database)))
    )
  })
}
