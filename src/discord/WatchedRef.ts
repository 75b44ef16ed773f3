import { Deferred, Effect, Option, Ref } from "effect"

/**
 * A Ref whose readers can wait until its value satisfies a predicate. A SubscriptionRef does
 * the same with a PubSub and a stream per reader woken on every change; with hundreds of
 * replies streaming at once (each reply's state changes with every word) that machinery was a
 * large share of the bot's CPU and garbage. Here a change completes one Deferred, and only
 * while someone waits. Updates are pure functions, so each is one atomic Ref step.
 */
interface WatchedRef<A> {
  readonly get: Effect.Effect<A>
  readonly modify: <B>(f: (a: A) => readonly [B, A]) => Effect.Effect<B>
  readonly update: (f: (a: A) => A) => Effect.Effect<void>
  readonly updateAndGet: (f: (a: A) => A) => Effect.Effect<A>
  /** The value once `predicate` holds for it: at once, or after the change that makes it hold. */
  readonly waitFor: (predicate: (a: A) => boolean) => Effect.Effect<A>
}

export const makeWatchedRef = <A>(initial: A): Effect.Effect<WatchedRef<A>> =>
  Effect.gen(function*() {
    const value = yield* Ref.make(initial)
    /** Completed by the next change; made by the first waiter that needs it. */
    const nextChange = yield* Ref.make<Option.Option<Deferred.Deferred<void>>>(Option.none())

    const changed = Effect.flatMap(
      Ref.getAndSet(nextChange, Option.none()),
      Option.match({ onNone: () => Effect.void, onSome: (deferred) => Deferred.succeed(deferred, undefined) })
    )
    const modify = <B>(f: (a: A) => readonly [B, A]): Effect.Effect<B> => Effect.flatMap(Ref.modify(value, f), (result) => Effect.as(changed, result))

    /** The Deferred the next change completes (taken before the value is read: no change is missed). */
    const awaitedChange = Effect.flatMap(Deferred.make<void>(), (fresh) =>
      Ref.modify(nextChange, (current): readonly [Deferred.Deferred<void>, Option.Option<Deferred.Deferred<void>>] =>
        Option.isSome(current) ? [current.value, current] : [fresh, Option.some(fresh)]))

    const waitFor = (predicate: (a: A) => boolean): Effect.Effect<A> =>
      Effect.gen(function*() {
        for (;;) {
          const change = yield* awaitedChange
          const current = yield* Ref.get(value)
          if (predicate(current)) return current
          yield* Deferred.await(change)
        }
      })

    return {
      get: Ref.get(value),
      modify,
      update: (f) => modify((a) => [undefined, f(a)]),
      updateAndGet: (f) =>
        modify((a) => {
          const next = f(a)
          return [next, next]
        }),
      waitFor
    }
  })
