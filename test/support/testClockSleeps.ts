import { Effect } from "effect"
import { TestClock } from "effect/testing"

/**
 * When the fibers sleeping on the TestClock are due (epoch ms, earliest first): the proof that a
 * retry or a timer is scheduled before the test moves the clock. TestClock keeps its sleeps in a
 * field outside its interface, read here in one place.
 */
export const pendingSleeps: Effect.Effect<ReadonlyArray<number>> = TestClock.testClockWith((clock) =>
  Effect.sync(() => {
    const sleeps = (clock as unknown as { readonly sleeps?: ReadonlyArray<{ readonly timestamp: number }> }).sleeps ?? []
    return sleeps.map((entry) => entry.timestamp).sort((a, b) => a - b)
  })
)
