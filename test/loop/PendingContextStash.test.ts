import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { TestClock } from "effect/testing"
import { PENDING_CONTEXT_MAX_ENTRIES, PendingContextStash } from "../../src/loop/PendingContextStash"

const withStash = <A, E>(body: (stash: PendingContextStash["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(PendingContextStash, body).pipe(Effect.provide(PendingContextStash.Default))

describe("PendingContextStash (spec §2.6, §10)", () => {
  it.effect("[45] take returns the payload once, then nothing", () =>
    withStash((stash) =>
      Effect.gen(function*() {
        const key = yield* stash.put({ text: "avatar" })
        assert.deepStrictEqual(yield* stash.take(key), Option.some({ text: "avatar" }))
        assert.deepStrictEqual(yield* stash.take(key), Option.none())
        assert.deepStrictEqual(yield* stash.take("never-stored"), Option.none())
      })))

  it.effect("generated keys are distinct; a given key is used as is", () =>
    withStash((stash) =>
      Effect.gen(function*() {
        const a = yield* stash.put(1)
        const b = yield* stash.put(2)
        assert.notStrictEqual(a, b)
        assert.strictEqual(yield* stash.put(3, "mine"), "mine")
        assert.deepStrictEqual(yield* stash.take("mine"), Option.some(3))
      })))

  it.effect("entries live 5 minutes on the Clock: present at 4:59.999, gone at 5:00", () =>
    withStash((stash) =>
      Effect.gen(function*() {
        const early = yield* stash.put("early")
        const late = yield* stash.put("late")
        yield* TestClock.adjust(Duration.millis(5 * 60_000 - 1))
        assert.deepStrictEqual(yield* stash.take(early), Option.some("early"))
        yield* TestClock.adjust(Duration.millis(1))
        assert.deepStrictEqual(yield* stash.take(late), Option.none())
        assert.strictEqual(yield* stash.size, 0)
      })))

  it.effect("at most 16 entries: the oldest is dropped first", () =>
    withStash((stash) =>
      Effect.gen(function*() {
        const keys: Array<string> = []
        for (let i = 0; i < PENDING_CONTEXT_MAX_ENTRIES + 2; i++) keys.push(yield* stash.put(i))
        assert.strictEqual(yield* stash.size, PENDING_CONTEXT_MAX_ENTRIES)
        assert.deepStrictEqual(yield* stash.take(keys[0]!), Option.none())
        assert.deepStrictEqual(yield* stash.take(keys[1]!), Option.none())
        assert.deepStrictEqual(yield* stash.take(keys[2]!), Option.some(2))
        assert.deepStrictEqual(yield* stash.take(keys.at(-1)!), Option.some(PENDING_CONTEXT_MAX_ENTRIES + 1))
      })))
})
