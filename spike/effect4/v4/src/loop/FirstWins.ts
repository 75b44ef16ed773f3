import { Effect } from "effect"

/**
 * A one-shot outcome settled by whichever contender comes first: a fiber's last step, a signal
 * listener, an observer. One fiber awaits it in a single async step. It stands in for a
 * Deferred plus a forked fiber per contender that only waits to complete it.
 */
export interface FirstWins<A> {
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
      resume?.(Effect.succeed(value))
    },
    // v3 Effect.async → v4 Effect.callback (same register/cleanup shape; it also passes an AbortSignal).
    await: Effect.callback<A>((resume) => {
      if (settled !== undefined) return resume(Effect.succeed(settled.value))
      waiting = resume
      return Effect.sync(() => {
        waiting = undefined
      })
    })
  }
}
