import { Effect } from "effect"

/**
 * A one-shot outcome settled by whichever contender comes first: a fiber's last step, a signal
 * listener, an observer. One fiber awaits it in a single async step. It stands in for a
 * Deferred (whose every instance copies the Effect prototype) plus a forked fiber per contender
 * that only waits to complete it: on the per-pass and per-tool-call paths those dominated the
 * allocation.
 */
interface FirstWins<A> {
  /** Synchronous and idempotent: only the first value counts. */
  readonly settle: (value: A) => void
  /** The first value settled; waits for it if there is none yet. */
  readonly await: Effect.Effect<A>
}

export const makeFirstWins = <A>(): FirstWins<A> => {
  let settled: { readonly value: A } | undefined
  let waiting: ((effect: Effect.Effect<A>) => void) | undefined
  return {
    settle: (value) => {
      if (settled !== undefined) return
      settled = { value }
      const resume = waiting
      waiting = undefined
      // The waiter goes on in a scheduler turn of its own, never on the settler's stack: the
      // settler (a follow-up's submit, a /kill, the alarm, a finishing tool) completes what it
      // is doing first, and the waiter finds it done.
      resume?.(Effect.as(Effect.yieldNow, value))
    },
    await: Effect.callback<A>((resume) => {
      if (settled !== undefined) return resume(Effect.succeed(settled.value))
      waiting = resume
      return Effect.sync(() => {
        waiting = undefined
      })
    })
  }
}
