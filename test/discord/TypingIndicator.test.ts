import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import { keepTyping } from "../../src/discord/TypingIndicator"

describe("keepTyping", () => {
  it.effect("types at once, refreshes every 8 s while nothing is visible, and never again once a message shows", () =>
    Effect.gen(function*() {
      const typedAt = yield* Ref.make<ReadonlyArray<number>>([])
      const visible = yield* Ref.make(false)
      const typing = Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(typedAt, (all) => [...all, now]))
      const fiber = yield* Effect.forkChild(keepTyping(typing, Effect.map(Ref.get(visible), (shown) => !shown)))
      yield* TestClock.adjust("17 seconds")
      assert.deepStrictEqual(yield* Ref.get(typedAt), [0, 8000, 16000])
      // The first message shows at 17 s: no refresh after it, even through a long quiet tool call.
      yield* Ref.set(visible, true)
      yield* TestClock.adjust("60 seconds")
      assert.deepStrictEqual(yield* Ref.get(typedAt), [0, 8000, 16000])
      assert.isTrue(fiber.pollUnsafe() !== undefined, "the indicator ended once the reply showed")
    }))

  it.effect("stops when interrupted", () =>
    Effect.gen(function*() {
      const typed = yield* Ref.make(0)
      const fiber = yield* Effect.forkChild(keepTyping(Ref.update(typed, (n) => n + 1), Effect.succeed(true)))
      yield* TestClock.adjust("9 seconds")
      assert.strictEqual(yield* Ref.get(typed), 2)
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual(yield* Ref.get(typed), 2)
    }))

  it.effect("a failing typing request does not stop the indicator", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const fiber = yield* Effect.forkChild(keepTyping(Effect.andThen(Ref.update(attempts, (n) => n + 1), Effect.fail("403")), Effect.succeed(true)))
      yield* TestClock.adjust("24 seconds")
      assert.strictEqual(yield* Ref.get(attempts), 4)
      yield* Fiber.interrupt(fiber)
    }))
})
