import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { EnabledChannelStore } from "../../src/store/EnabledChannelStore"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

for (const database of testDatabases) {
  describe(`EnabledChannelStore on ${database.name}`, () => {
    it.effect("enable, isEnabled, list (oldest first) and disable", () =>
      Effect.gen(function* () {
        const store = yield* EnabledChannelStore
        assert.isFalse(yield* store.isEnabled("g1", "c1"))
        yield* TestClock.setTime(10)
        yield* store.enable("g1", "c1", "admin")
        yield* TestClock.setTime(20)
        yield* store.enable("g1", "c2")
        yield* store.enable("g2", "c9")
        // Enabling again keeps the first record.
        yield* store.enable("g1", "c1", "someone-else")
        assert.isTrue(yield* store.isEnabled("g1", "c1"))
        assert.isFalse(yield* store.isEnabled("g2", "c1"))
        assert.deepStrictEqual(yield* store.list("g1"), [
          { guildId: "g1", channelId: "c1", enabledBy: "admin", enabledAt: 10 },
          { guildId: "g1", channelId: "c2", enabledBy: undefined, enabledAt: 20 }
        ])
        assert.isTrue(yield* store.disable("g1", "c1"))
        assert.isFalse(yield* store.disable("g1", "c1"))
        assert.isFalse(yield* store.isEnabled("g1", "c1"))
        assert.deepStrictEqual((yield* store.list("g1")).map((channel) => channel.channelId), ["c2"])
      }).pipe(Effect.provide(storesOn(database)))
    )
  })
}
