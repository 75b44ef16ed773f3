import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { defaultGuildSettings, GuildSettingsStore } from "../../src/store/GuildSettingsStore"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

for (const database of testDatabases) {
  describe(`GuildSettingsStore on ${database.name}`, () => {
    it.effect("every capability is off until set, and set per guild", () =>
      Effect.gen(function* () {
        const store = yield* GuildSettingsStore
        assert.deepStrictEqual(yield* store.get("g1"), defaultGuildSettings)
        assert.isFalse(yield* store.isEnabled("g1", "user_blocking_enabled"))
        yield* store.setCapability("g1", "user_blocking_enabled", true)
        yield* store.setCapability("g1", "deliberate_tool_mode", true)
        yield* store.setCapability("g1", "deliberate_tool_mode", false)
        yield* store.setCapability("g1", "server_wide_memory", true)
        assert.deepStrictEqual(yield* store.get("g1"), { ...defaultGuildSettings, user_blocking_enabled: true, server_wide_memory: true })
        assert.isTrue(yield* store.isEnabled("g1", "server_wide_memory"))
        assert.isFalse(yield* store.isEnabled("g2", "server_wide_memory"), "off by default")
        assert.isTrue(yield* store.isEnabled("g1", "user_blocking_enabled"))
        assert.isFalse(yield* store.isEnabled("g1", "deliberate_tool_mode"))
        assert.deepStrictEqual(yield* store.get("g2"), defaultGuildSettings)
      }).pipe(Effect.provide(storesOn(database)))
    )
  })
}
