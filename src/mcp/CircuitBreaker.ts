import { Clock, Duration, Effect, HashMap, Option, Ref } from "effect"

/**
 * Quarantine of servers that failed to connect: while `now < until` no dial is made, so an
 * unreachable server cannot re-pay its connect timeout on every turn.
 */
interface CircuitBreaker {
  /** The quarantine end (epoch ms) if the key is held back now; an elapsed one is dropped. */
  readonly heldUntil: (key: string) => Effect.Effect<Option.Option<number>>
  readonly trip: (key: string) => Effect.Effect<number>
  readonly clear: (key: string) => Effect.Effect<void>
  /** Drops elapsed quarantines (the idle sweep runs this). */
  readonly prune: Effect.Effect<void>
}

/**
 * `onOpenCount` hears how many keys are held back after every change (changes are rare: a failed
 * connect, its end); the pool feeds a gauge with it, so the breaker knows nothing of metrics.
 */
export const makeCircuitBreaker = (
  cooldown: Duration.Duration,
  onOpenCount: (open: number) => Effect.Effect<void> = () => Effect.void
): Effect.Effect<CircuitBreaker> =>
  Effect.gen(function* () {
    const quarantine = yield* Ref.make(HashMap.empty<string, number>())
    const publish = Effect.flatMap(Ref.get(quarantine), (entries) => onOpenCount(HashMap.size(entries)))

    const heldUntil = (key: string) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const [held, elapsed] = yield* Ref.modify(quarantine, (entries): [readonly [Option.Option<number>, boolean], HashMap.HashMap<string, number>] => {
          const until = HashMap.get(entries, key)
          if (Option.isSome(until) && now >= until.value) return [[Option.none(), true], HashMap.remove(entries, key)]
          return [[until, false], entries]
        })
        if (elapsed) yield* publish
        return held
      })

    const trip = (key: string) =>
      Effect.gen(function* () {
        const until = (yield* Clock.currentTimeMillis) + Duration.toMillis(cooldown)
        yield* Ref.update(quarantine, HashMap.set(key, until))
        yield* publish
        return until
      })

    const clear = (key: string) => Effect.andThen(Ref.update(quarantine, HashMap.remove(key)), publish)

    const prune = Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      yield* Ref.update(quarantine, HashMap.filter((until) => now < until))
      yield* publish
    })

    return { heldUntil, trip, clear, prune }
  })
