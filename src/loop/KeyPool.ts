import { Clock, Duration, Effect, Option, Ref } from "effect"

/** At most this many keys are tried for one model in one turn (spec §5). */
export const MAX_KEY_ATTEMPTS = 3
/** A rate-limited key rests this long. */
export const RATE_LIMIT_COOLDOWN = Duration.seconds(60)
/** A key that failed otherwise (auth, server, network) rests this long. */
export const API_ERROR_COOLDOWN = Duration.minutes(5)

export type KeyErrorKind = "rate_limit" | "api_error"

/**
 * Cooldowns of the API keys of `LLM_API_KEYS`, by their index in the pool. Process-wide:
 * a key that hit a rate limit in one turn is skipped by the next turns until it has rested.
 * All time is on the Clock.
 */
export class KeyPool extends Effect.Service<KeyPool>()("loopcord/loop/KeyPool", {
  effect: Effect.gen(function*() {
    /** Key index ⇒ time (ms) until which it rests. */
    const restingUntil = yield* Ref.make<ReadonlyMap<number, number>>(new Map())

    const resting = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const all = yield* Ref.get(restingUntil)
      return new Map([...all].filter(([, until]) => until > now))
    })

    const indices = (keyCount: number) => Array.from({ length: Math.max(keyCount, 1) }, (_, index) => index)

    /**
     * The next key to try: the first one in pool order that is neither resting nor already
     * tried. When every key rests and none was tried yet, the one that wakes first is tried
     * anyway: a turn always gets at least one attempt per model.
     */
    const next = Effect.fn("KeyPool.next")(function*(keyCount: number, tried: ReadonlySet<number>) {
      const rest = yield* resting
      const ready = indices(keyCount).find((index) => !tried.has(index) && !rest.has(index))
      if (ready !== undefined) return Option.some(ready)
      if (tried.size > 0) return Option.none()
      const soonest = indices(keyCount).sort((a, b) => (rest.get(a) ?? 0) - (rest.get(b) ?? 0))[0]
      return Option.fromNullable(soonest)
    })

    /** Whether another ready key remains after `tried` (the attempt may stay quiet on failure). */
    const hasAnother = (keyCount: number, tried: ReadonlySet<number>) =>
      Effect.map(resting, (rest) => indices(keyCount).some((index) => !tried.has(index) && !rest.has(index)))

    const recordError = Effect.fn("KeyPool.recordError")(function*(index: number, kind: KeyErrorKind) {
      const now = yield* Clock.currentTimeMillis
      const rest = kind === "rate_limit" ? RATE_LIMIT_COOLDOWN : API_ERROR_COOLDOWN
      yield* Ref.update(restingUntil, (all) => new Map(all).set(index, now + Duration.toMillis(rest)))
      yield* Effect.logWarning(`API key #${index} rests for ${Duration.format(rest)} after a ${kind}`)
    })

    const recordSuccess = (index: number) =>
      Ref.update(restingUntil, (all) => {
        if (!all.has(index)) return all
        const next = new Map(all)
        next.delete(index)
        return next
      })

    /** Resting keys and until when (ms), for diagnostics and tests. */
    const snapshot = Effect.map(resting, (rest): ReadonlyMap<number, number> => rest)

    return { next, hasAnother, recordError, recordSuccess, snapshot } as const
  })
}) {}
