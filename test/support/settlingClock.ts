import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"

/**
 * Scheduler rounds the fibers a test started get before the TestClock moves. Every fiber hop
 * is a scheduler round: a forked tool loop reaches its tools' sleeps about four rounds after it
 * started, a submitted turn some more; 64 leaves a wide margin.
 */
const SETTLE_ROUNDS = 64

const settle: Effect.Effect<void> = Effect.suspend(function loop(round = 0): Effect.Effect<void> {
  return round >= SETTLE_ROUNDS ? Effect.void : Effect.flatMap(Effect.yieldNow, () => loop(round + 1))
})

/**
 * The test's TestClock, with `adjust` and `setTime` letting the fibers the test started run
 * until they wait (on the clock, a signal, each other) before time moves. TestClock yields
 * one scheduler round there, and the fibers woken by a move run until they wait; work the
 * test started itself (a submitted turn, a forked pass) needs more rounds than one to reach
 * its first sleep, and would otherwise start its timers after the clock moved.
 */
const settling = (clock: TestClock.TestClock): TestClock.TestClock =>
  new Proxy(clock, {
    get(target, property) {
      if (property === "adjust") return (duration: Parameters<TestClock.TestClock["adjust"]>[0]) => Effect.andThen(settle, target.adjust(duration))
      if (property === "setTime") return (timestamp: number) => Effect.andThen(settle, target.setTime(timestamp))
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === "function" ? value.bind(target) : value
    }
  })

/** Provides the settling clock in place of the test's TestClock (it keeps the same time and sleeps). */
export const settlingTestClock: Layer.Layer<never> = Layer.effect(
  Clock.Clock,
  TestClock.testClockWith((clock) => Effect.succeed(settling(clock)))
)
