import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { makeWatchedRef } from "../../src/discord/WatchedRef"

describe("WatchedRef", () => {
  it.effect("reads, updates and modifies like a Ref", () =>
    Effect.gen(function*() {
      const ref = yield* makeWatchedRef(1)
      yield* ref.update((n) => n + 1)
      assert.strictEqual(yield* ref.modify((n) => [`was ${n}`, n * 10]), "was 2")
      assert.strictEqual(yield* ref.updateAndGet((n) => n + 5), 25)
      assert.strictEqual(yield* ref.get, 25)
    }))

  it.effect("waitFor returns at once when the value already holds", () =>
    Effect.gen(function*() {
      const ref = yield* makeWatchedRef({ ready: true, n: 3 })
      assert.deepStrictEqual(yield* ref.waitFor((s) => s.ready), { ready: true, n: 3 })
    }))

  it.effect("waitFor waits through changes that do not satisfy it, and returns the value that does", () =>
    Effect.gen(function*() {
      const ref = yield* makeWatchedRef(0)
      const waiting = yield* Effect.forkChild(ref.waitFor((n) => n >= 3))
      yield* Effect.yieldNow
      for (const _ of [1, 2]) {
        yield* ref.update((n) => n + 1)
        yield* Effect.yieldNow
        assert.isTrue(waiting.pollUnsafe() === undefined, "not yet")
      }
      yield* ref.update((n) => n + 1)
      assert.strictEqual(yield* Fiber.join(waiting), 3)
    }))

  it.effect("every waiter is woken by the change that satisfies it, whatever it waits for", () =>
    Effect.gen(function*() {
      const ref = yield* makeWatchedRef("")
      const a = yield* Effect.forkChild(ref.waitFor((s) => s.includes("a")))
      const b = yield* Effect.forkChild(ref.waitFor((s) => s.includes("b")))
      yield* Effect.yieldNow
      yield* ref.update((s) => `${s}a`)
      assert.strictEqual(yield* Fiber.join(a), "a")
      yield* Effect.yieldNow
      assert.isTrue(b.pollUnsafe() === undefined)
      yield* ref.modify((s) => [undefined, `${s}b`])
      assert.strictEqual(yield* Fiber.join(b), "ab")
    }))
})
