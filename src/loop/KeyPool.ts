import { Clock, Context, Duration, Effect, FiberSet, Layer, Option, Ref, Schedule } from "effect"
import { type SharedCooldownError, SharedKeyCooldowns, type SharedKeyCooldownsShape } from "./SharedKeyCooldowns"

/** At most this many keys are tried for one model in one turn. */
export const MAX_KEY_ATTEMPTS = 3
/** A rate-limited key rests this long. */
const RATE_LIMIT_COOLDOWN = Duration.seconds(60)
/** A key that failed otherwise (auth, server, network) rests this long. */
const API_ERROR_COOLDOWN = Duration.minutes(5)

type KeyErrorKind = "rate_limit" | "api_error"

/** How often the cooldowns other processes recorded are read (when they are shared). */
const SHARED_COOLDOWN_REFRESH = Duration.seconds(2)
/** A shared read or write that takes longer is given up (the pool goes on with what it knows). */
const SHARED_COOLDOWN_TIMEOUT = Duration.seconds(2)

const later = (a: number | undefined, b: number | undefined) => Math.max(a ?? 0, b ?? 0)

const make = Effect.gen(function*() {
  /** Key index ⇒ time (ms) until which it rests, as this process recorded. */
  const restingUntil = yield* Ref.make<ReadonlyMap<number, number>>(new Map())
  /** The same, as the shared store last said (every process's rests). */
  const restingElsewhere = yield* Ref.make<ReadonlyMap<number, number>>(new Map())
  const shared = yield* SharedKeyCooldowns
  const background = yield* FiberSet.make()
  const sharingFailed = yield* Ref.make(false)

  const resting = Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const own = yield* Ref.get(restingUntil)
    const others = yield* Ref.get(restingElsewhere)
    const merged = new Map<number, number>()
    for (const index of new Set([...own.keys(), ...others.keys()])) {
      const until = later(own.get(index), others.get(index))
      if (until > now) merged.set(index, until)
    }
    return merged
  })

  /** Bounded; one warning when sharing starts failing, one line when it works again; None when it failed. */
  const shareOutcome = <A>(call: Effect.Effect<A, SharedCooldownError>): Effect.Effect<Option.Option<A>> =>
    call.pipe(
      Effect.timeoutOrElse({ duration: SHARED_COOLDOWN_TIMEOUT, orElse: () => Effect.fail("no answer" as const) }),
      Effect.tap(() =>
        Effect.flatMap(Ref.getAndSet(sharingFailed, false), (was) => (was ? Effect.logInfo("Shared key cooldowns work again") : Effect.void))),
      Effect.asSome,
      Effect.catch((error) =>
        Effect.flatMap(Ref.getAndSet(sharingFailed, true), (was) =>
          Effect.as(
            was
              ? Effect.void
              : Effect.logWarning(`Shared key cooldowns unavailable (${typeof error === "string" ? error : error.message}); keys rest on this host only meanwhile`),
            Option.none()
          )))
    )

  /** A write to the shared store, in the background (a turn never waits on it). */
  const share = (write: (store: SharedKeyCooldownsShape) => Effect.Effect<void, SharedCooldownError>) =>
    Option.match(shared, { onNone: () => Effect.void, onSome: (store) => Effect.asVoid(FiberSet.run(background, { startImmediately: false })(shareOutcome(write(store)))) })

  if (Option.isSome(shared)) {
    const store = shared.value
    const refresh = Effect.flatMap(shareOutcome(store.resting), Option.match({
      onNone: () => Effect.void,
      onSome: (answer) => Ref.set(restingElsewhere, answer)
    }))
    yield* Effect.forkScoped(Effect.repeat(refresh, Schedule.spaced(SHARED_COOLDOWN_REFRESH)))
  }

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
    return Option.fromNullishOr(soonest)
  })

  /** Whether another ready key remains after `tried` (the attempt may stay quiet on failure). */
  const hasAnother = (keyCount: number, tried: ReadonlySet<number>) =>
    Effect.map(resting, (rest) => indices(keyCount).some((index) => !tried.has(index) && !rest.has(index)))

  const recordError = Effect.fn("KeyPool.recordError")(function*(index: number, kind: KeyErrorKind) {
    const now = yield* Clock.currentTimeMillis
    const rest = kind === "rate_limit" ? RATE_LIMIT_COOLDOWN : API_ERROR_COOLDOWN
    const until = now + Duration.toMillis(rest)
    yield* Ref.update(restingUntil, (all) => new Map(all).set(index, until))
    yield* share((store) => store.rest(index, until))
    yield* Effect.logWarning(`API key #${index} rests for ${Duration.format(rest)} after a ${kind}`)
  })

  const without = (index: number) => (all: ReadonlyMap<number, number>): readonly [boolean, ReadonlyMap<number, number>] => {
    if (!all.has(index)) return [false, all]
    const next = new Map(all)
    next.delete(index)
    return [true, next]
  }

  /**
   * The key answered: its rest ends here, and in the shared store, so hosts that only know of
   * it from there use it again; a host keeps the rests it recorded itself until they end.
   */
  const recordSuccess = (index: number) =>
    Effect.gen(function*() {
      const ownRest = yield* Ref.modify(restingUntil, without(index))
      const sharedRest = yield* Ref.modify(restingElsewhere, without(index))
      // Only a key that rested costs a write: a turn on a healthy key never touches the database.
      if (ownRest || sharedRest) yield* share((store) => store.clear(index))
    })

  /** Resting keys and until when (ms), for diagnostics and tests. */
  const snapshot = Effect.map(resting, (rest): ReadonlyMap<number, number> => rest)

  return { next, hasAnother, recordError, recordSuccess, snapshot } as const
})

/**
 * Cooldowns of the API keys of `LLM_API_KEYS`, by their index in the pool. Process-wide:
 * a key that hit a rate limit in one turn is skipped by the next turns until it has rested.
 * With SharedKeyCooldowns (several hosts, one database), a rest is also written there and the
 * others' rests are read every 2 s in the background: a turn never waits on the database.
 * All time is on the Clock.
 */
export class KeyPool extends Context.Service<KeyPool, Effect.Success<typeof make>>()("loopcord/loop/KeyPool") {
  static readonly Default: Layer.Layer<KeyPool> = Layer.effect(KeyPool, make)
}
