import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { makeCircuitBreaker } from "../../src/mcp/CircuitBreaker"

describe("CircuitBreaker", () => {
  it.effect("holds a tripped key back until the cooldown elapses on the Clock; clear lets it through at once", () =>
    Effect.gen(function*() {
      const breaker = yield* makeCircuitBreaker(Duration.seconds(60))
      const until = yield* breaker.trip("guild:a")
      assert.deepStrictEqual(yield* breaker.heldUntil("guild:a"), Option.some(until))
      assert.isTrue(Option.isNone(yield* breaker.heldUntil("guild:b")))
      yield* TestClock.adjust("60 seconds")
      assert.isTrue(Option.isNone(yield* breaker.heldUntil("guild:a")))
      yield* breaker.trip("guild:b")
      yield* breaker.clear("guild:b")
      assert.isTrue(Option.isNone(yield* breaker.heldUntil("guild:b")))
    }))

  it.effect("reports the open count after every change to whoever passed a listener in", () =>
    Effect.gen(function*() {
      const heard = yield* Ref.make<ReadonlyArray<number>>([])
      const breaker = yield* makeCircuitBreaker(Duration.seconds(60), (open) => Ref.update(heard, (all) => [...all, open]))
      yield* breaker.trip("a")
      yield* breaker.trip("b")
      yield* breaker.clear("a")
      yield* TestClock.adjust("61 seconds")
      yield* breaker.prune
      assert.deepStrictEqual(yield* Ref.get(heard), [1, 2, 1, 0])
    }))
})
