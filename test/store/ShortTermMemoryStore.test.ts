import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { memoryScopeOf, ShortTermMemoryStore } from "../../src/store/ShortTermMemoryStore"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

const guild = memoryScopeOf({ guildId: "g1", userId: "u1" })
const otherGuild = memoryScopeOf({ guildId: "g2", userId: "u1" })
const dm = memoryScopeOf({ guildId: undefined, userId: "u1" })

for (const database of testDatabases) {
  describe(`ShortTermMemoryStore on ${database.name}`, () => {
    it.effect("an unwritten scope reads as an empty map", () =>
      Effect.gen(function* () {
        const store = yield* ShortTermMemoryStore
        assert.deepStrictEqual(yield* store.get(guild, undefined), {})
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("replace swaps the whole category map (categories left out are dropped)", () =>
      Effect.gen(function* () {
        const store = yield* ShortTermMemoryStore
        yield* store.replace(guild, "p1", { summary: "talked about cats", scene_state: "kitchen" })
        assert.deepStrictEqual(yield* store.get(guild, "p1"), { summary: "talked about cats", scene_state: "kitchen" })
        yield* store.replace(guild, "p1", { scene_state: "bedroom — 寝室 \"quoted\"" })
        assert.deepStrictEqual(yield* store.get(guild, "p1"), { scene_state: "bedroom — 寝室 \"quoted\"" })
        yield* store.replace(guild, "p1", {})
        assert.deepStrictEqual(yield* store.get(guild, "p1"), {})
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("maps are separate per guild, per DM user and per persona", () =>
      Effect.gen(function* () {
        const store = yield* ShortTermMemoryStore
        yield* store.replace(guild, undefined, { summary: "guild default persona" })
        yield* store.replace(guild, "p1", { summary: "guild persona p1" })
        yield* store.replace(dm, undefined, { summary: "dm" })
        assert.deepStrictEqual(yield* store.get(guild, undefined), { summary: "guild default persona" })
        assert.deepStrictEqual(yield* store.get(guild, "p1"), { summary: "guild persona p1" })
        assert.deepStrictEqual(yield* store.get(dm, undefined), { summary: "dm" })
        assert.deepStrictEqual(yield* store.get(otherGuild, undefined), {})
        assert.deepStrictEqual(yield* store.get(memoryScopeOf({ guildId: undefined, userId: "u2" }), undefined), {})
      }).pipe(Effect.provide(storesOn(database)))
    )
  })
}
