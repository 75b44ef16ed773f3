import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Fiber, Ref, TestClock } from "effect"
import { keepTyping } from "../../src/discord/TypingIndicator"

describe("keepTyping", () => {
  it.effect("types at once, refreshes every 8 s while no text is written, pauses while text streams, stops when interrupted", () =>
    Effect.gen(function*() {
      const typedAt = yield* Ref.make<ReadonlyArray<number>>([])
      const lastWrite = yield* Ref.make(0)
      const typing = Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(typedAt, (all) => [...all, now]))
      const fiber = yield* Effect.fork(keepTyping(typing, Ref.get(lastWrite)))
      yield* TestClock.adjust("17 seconds")
      assert.deepStrictEqual(yield* Ref.get(typedAt), [0, 8000, 16000])
      // Text streams from 17 s to 30 s: no refresh meanwhile.
      for (let t = 17; t <= 30; t += 1) {
        yield* Ref.set(lastWrite, t * 1000)
        yield* TestClock.adjust("1 second")
      }
      assert.deepStrictEqual(yield* Ref.get(typedAt), [0, 8000, 16000])
      // Quiet again (a tool runs): the next tick after 8 s of silence types.
      yield* TestClock.adjust("9 seconds")
      assert.deepStrictEqual(yield* Ref.get(typedAt), [0, 8000, 16000, 40000])
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("60 seconds")
      assert.strictEqual((yield* Ref.get(typedAt)).length, 4)
    }))

  it.effect("a failing typing request does not stop the indicator", () =>
    Effect.gen(function*() {
      const attempts = yield* Ref.make(0)
      const fiber = yield* Effect.fork(keepTyping(Effect.zipRight(Ref.update(attempts, (n) => n + 1), Effect.fail("403")), Effect.succeed(0)))
      yield* TestClock.adjust("24 seconds")
      assert.strictEqual(yield* Ref.get(attempts), 4)
      yield* Fiber.interrupt(fiber)
    }))
})
