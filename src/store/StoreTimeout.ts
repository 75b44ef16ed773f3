import { Context, Duration, Effect, Fiber, Option } from "effect"
import { DEFAULT_STORE_TIMEOUT } from "../config/StoreConfig"
import { StoreError } from "./StoreError"

/**
 * How long one store call may take (`STORE_TIMEOUT_MS`). A Reference, so every store layer finds
 * it without wiring; `Stores.layerConfig` provides the configured value, tests their own.
 */
export const StoreTimeout = Context.Reference<Duration.Duration>("loopcord/store/StoreTimeout", {
  defaultValue: (): Duration.Duration => DEFAULT_STORE_TIMEOUT
})

/**
 * Runs `effect` in a fiber of its own and waits for it; interrupting the wait returns at once and
 * interrupts that fiber in the background. A query whose cancellation hangs too (a dead
 * connection) then cannot hold its caller past the deadline.
 */
export const disconnect = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.flatMap(Effect.forkDetach(effect), (fiber) =>
      Effect.onInterrupt(restore(Fiber.join(fiber)), () => Effect.asVoid(Effect.forkDetach(Fiber.interrupt(fiber)))))
  )

/** What a store call that hit the deadline fails with, in the store's own error type. */
type TimedOut<E> = (operation: string, detail: string) => E

/** The methods of a store service: every one returns an Effect failing with the store's error. */
type StoreMethods<S, E> = { readonly [K in keyof S]: (...args: ReadonlyArray<never>) => Effect.Effect<unknown, E> }

const timeoutDetail = (timeout: Duration.Duration) =>
  `the database did not answer within ${Duration.toMillis(timeout)} ms (STORE_TIMEOUT_MS)`

/**
 * Bounds every method of a store: a call the database does not answer within `STORE_TIMEOUT_MS`
 * fails with the store's typed error and one log line, instead of wedging the caller (a channel's
 * turn, a slash command). The call is disconnected, so a query whose cancellation hangs too (a
 * dead connection) is interrupted in the background and the deadline holds. Applied once, where
 * each store's layer is built, so no method can forget it.
 */
export const withStoreTimeout = <S extends StoreMethods<S, E>, E>(
  store: string,
  methods: S,
  timedOut: TimedOut<E>
): Effect.Effect<S> =>
  Effect.map(StoreTimeout, (timeout) => {
    const bound = (operation: string, call: Effect.Effect<unknown, E>) =>
      Effect.flatMap(Effect.timeoutOption(disconnect(call), timeout), (answer) =>
        Option.match(answer, {
          onSome: Effect.succeed,
          onNone: () =>
            Effect.andThen(
              Effect.logError(`${store}.${operation}: ${timeoutDetail(timeout)}`).pipe(
                Effect.annotateLogs({ store, operation, timeoutMs: Duration.toMillis(timeout) })
              ),
              Effect.fail(timedOut(operation, timeoutDetail(timeout)))
            )
        }))
    const entries = Object.keys(methods).map((operation) => {
      const method: (...args: ReadonlyArray<never>) => Effect.Effect<unknown, E> = methods[operation as keyof S]
      return [operation, (...args: ReadonlyArray<never>) => bound(operation, method(...args))] as const
    })
    // Each method keeps its signature: the deadline adds nothing but the store's own error type.
    return Object.fromEntries(entries) as S
  })

/** The timeout error of the stores that fail with `StoreError`. */
const storeTimedOut = (store: string): TimedOut<StoreError> => (operation, detail) =>
  new StoreError({ store, operation, reason: "timeout", detail })

/** A `StoreError` store's constructor with every method bounded: what each store layer builds. */
export const boundedStore = <S extends StoreMethods<S, StoreError>, R>(store: string, make: Effect.Effect<S, never, R>) =>
  Effect.flatMap(make, (methods) => withStoreTimeout(store, methods, storeTimedOut(store)))
