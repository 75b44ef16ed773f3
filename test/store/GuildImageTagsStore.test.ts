import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { GuildImageTagsStore } from "../../src/store/GuildImageTagsStore"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

for (const database of testDatabases) {
  describe(`GuildImageTagsStore on ${database.name}`, () => {
    it.effect("tags are per guild, trimmed, replaced on set, gone on clear; overlong lists are refused", () =>
      Effect.gen(function*() {
        const store = yield* GuildImageTagsStore
        assert.isTrue(Option.isNone(yield* store.get("g1")))
        yield* store.set("g1", { positive: " watercolor, soft light ", negative: "blurry" }, "admin-1")
        yield* store.set("g2", { positive: "pixel art", negative: "" })
        assert.deepStrictEqual(yield* store.get("g1"), Option.some({ positive: "watercolor, soft light", negative: "blurry" }))
        yield* store.set("g1", { positive: "ink", negative: "" })
        assert.deepStrictEqual(yield* store.get("g1"), Option.some({ positive: "ink", negative: "" }))
        assert.isTrue(yield* store.clear("g1"))
        assert.isFalse(yield* store.clear("g1"))
        assert.isTrue(Option.isNone(yield* store.get("g1")))
        assert.deepStrictEqual(yield* store.get("g2"), Option.some({ positive: "pixel art", negative: "" }))
        const error = yield* Effect.flip(store.set("g3", { positive: "x".repeat(501), negative: "" }))
        assert.strictEqual(error.reason, "invalid_input")
      }).pipe(Effect.provide(storesOn(database))))
  })
}
