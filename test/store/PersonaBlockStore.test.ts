import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { MAX_BLOCK_HOURS, PersonaBlockStore } from "../../src/store/PersonaBlockStore"
import { testDatabases } from "./databases"
import { storesOn } from "./stores"

const HOUR = 3_600_000
const request = (overrides: Partial<Parameters<PersonaBlockStore["Service"]["block"]>[0]> = {}) => ({
  guildId: "g1",
  personaId: "p1",
  userId: "u1",
  userName: "Alice",
  mode: "block" as const,
  hours: 2,
  reason: "spam",
  blockedBy: "u9",
  ...overrides
})

for (const database of testDatabases) {
  describe(`PersonaBlockStore on ${database.name}`, () => {
    it.effect("a block is active until its expiry on the Clock, then gone", () =>
      Effect.gen(function* () {
        const store = yield* PersonaBlockStore
        yield* TestClock.setTime(1_000)
        const stored = yield* store.block(request())
        assert.strictEqual(stored.expiresAt, 1_000 + 2 * HOUR)
        const active = yield* store.activeBlocks("g1", "p1")
        assert.deepStrictEqual(active, [stored])
        yield* TestClock.adjust(2 * HOUR - 1)
        assert.isTrue(Option.isSome(yield* store.activeBlock("g1", "p1", "u1")))
        yield* TestClock.adjust(1)
        assert.isTrue(Option.isNone(yield* store.activeBlock("g1", "p1", "u1")))
        assert.deepStrictEqual(yield* store.activeBlocks("g1", "p1"), [])
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("blocks are scoped to the persona and the guild; re-blocking replaces mode and expiry", () =>
      Effect.gen(function* () {
        const store = yield* PersonaBlockStore
        yield* store.block(request())
        yield* store.block(request({ personaId: undefined, userId: "u2", userName: "Bob", mode: "mute", reason: undefined }))
        assert.deepStrictEqual((yield* store.activeBlocks("g1", "p1")).map((block) => block.userId), ["u1"])
        const defaultPersona = yield* store.activeBlocks("g1", undefined)
        assert.deepStrictEqual(
          defaultPersona.map((block) => [block.userId, block.mode, block.reason, block.personaId]),
          [["u2", "mute", undefined, undefined]]
        )
        assert.deepStrictEqual(yield* store.activeBlocks("g2", "p1"), [])
        yield* store.block(request({ mode: "mute", hours: 5 }))
        const replaced = yield* store.activeBlocks("g1", "p1")
        assert.deepStrictEqual(replaced.map((block) => [block.mode, block.expiresAt]), [["mute", 5 * HOUR]])
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("unblock removes the block and returns it; unknown or expired blocks return none", () =>
      Effect.gen(function* () {
        const store = yield* PersonaBlockStore
        const stored = yield* store.block(request())
        assert.deepStrictEqual(yield* store.unblock("g1", "p1", "u1"), Option.some(stored))
        assert.deepStrictEqual(yield* store.activeBlocks("g1", "p1"), [])
        assert.isTrue(Option.isNone(yield* store.unblock("g1", "p1", "u1")))
        yield* store.block(request({ hours: 1 }))
        yield* TestClock.adjust(HOUR)
        assert.isTrue(Option.isNone(yield* store.unblock("g1", "p1", "u1")))
      }).pipe(Effect.provide(storesOn(database)))
    )

    it.effect("hours outside 1..720 or not whole are refused as invalid input", () =>
      Effect.gen(function* () {
        const store = yield* PersonaBlockStore
        for (const hours of [0, -1, 1.5, MAX_BLOCK_HOURS + 1, Number.NaN]) {
          const error = yield* Effect.flip(store.block(request({ hours })))
          assert.strictEqual(error.reason, "invalid_input")
        }
        const longest = yield* store.block(request({ hours: MAX_BLOCK_HOURS }))
        assert.strictEqual(longest.expiresAt, MAX_BLOCK_HOURS * HOUR)
      }).pipe(Effect.provide(storesOn(database)))
    )
  })
}
