import { Clock, Context, Duration, Effect, Option } from "effect"
import { makeFirstWins } from "./FirstWins"
import { makeTurnAlarm, type TurnAlarm } from "./TurnAlarm"

/** Who asked to stop and where to answer. */
export interface StopContext {
  readonly requesterId: string
  readonly originalMessageId?: string
}

/** A pending request against the channel's running turn. */
export type TurnRequest =
  | { readonly _tag: "Stop"; readonly requesterId: string | undefined; readonly stopContext: StopContext | undefined; readonly at: number }
  | { readonly _tag: "FollowUp"; readonly at: number }

/** Entries older than this are stale and ignored. */
export const STALE_REQUEST_AFTER = Duration.minutes(5)

/** Kill and follow-up signals of one channel's turns. */
export interface TurnSignalsShape {
  readonly channelId: string
  readonly current: Effect.Effect<Option.Option<TurnRequest>>
  readonly requestStop: (options?: { readonly requesterId?: string; readonly stopContext?: StopContext }) => Effect.Effect<void>
  readonly requestFollowUp: Effect.Effect<void>
  readonly kill: (options?: { readonly requesterId?: string; readonly stopContext?: StopContext }) => Effect.Effect<void>
  readonly clearFollowUp: Effect.Effect<void>
  readonly clearStop: Effect.Effect<void>
  readonly takeStopContext: Effect.Effect<Option.Option<StopContext>>
  /** Calls `listener` once, synchronously, with the first fresh request; returns the unsubscribe. */
  readonly onRequest: (listener: (request: TurnRequest) => void) => Effect.Effect<() => void>
  /** Calls `listener` once, synchronously, when the turn is killed; returns the unsubscribe. */
  readonly onKill: (listener: () => void) => Effect.Effect<() => void>
  readonly awaitRequest: Effect.Effect<TurnRequest>
  readonly awaitKill: Effect.Effect<void>
  readonly isKilled: Effect.Effect<boolean>
  readonly alarm: TurnAlarm
}

// v3 Context.Tag("id")<Self, Shape>() → v4 Context.Service<Self, Shape>()("id").
export class TurnSignals extends Context.Service<TurnSignals, TurnSignalsShape>()("loopcord/loop/TurnSignals") {}

const isFresh = (request: TurnRequest, now: number) => now - request.at < Duration.toMillis(STALE_REQUEST_AFTER)

/** Signals for one turn of `channelId`. */
export const makeTurnSignals = (channelId: string): Effect.Effect<TurnSignalsShape> =>
  Effect.sync(() => {
    let pending: Option.Option<TurnRequest> = Option.none()
    let killed = false
    const requestListeners = new Set<(request: TurnRequest) => void>()
    const killListeners = new Set<() => void>()

    const freshAt = (now: number) => Option.filter(pending, (request) => isFresh(request, now))

    const notify = (now: number) => {
      const request = freshAt(now)
      if (Option.isNone(request) || requestListeners.size === 0) return
      const waiting = [...requestListeners]
      requestListeners.clear()
      for (const listener of waiting) listener(request.value)
    }

    const current = Effect.map(Clock.currentTimeMillis, freshAt)

    const requestStop: TurnSignalsShape["requestStop"] = (options = {}) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        pending = Option.some({ _tag: "Stop", requesterId: options.requesterId, stopContext: options.stopContext, at })
        notify(at)
      })

    const requestFollowUp = Effect.map(Clock.currentTimeMillis, (at) => {
      if (!(Option.isSome(pending) && pending.value._tag === "Stop")) pending = Option.some({ _tag: "FollowUp", at })
      notify(at)
    })

    const clearWhen = (predicate: (request: TurnRequest) => boolean) =>
      Effect.sync(() => {
        if (Option.isSome(pending) && predicate(pending.value)) pending = Option.none()
      })

    const onRequest: TurnSignalsShape["onRequest"] = (listener) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const request = freshAt(now)
        if (Option.isSome(request)) {
          listener(request.value)
          return noop
        }
        requestListeners.add(listener)
        return () => {
          requestListeners.delete(listener)
        }
      })

    const onKill: TurnSignalsShape["onKill"] = (listener) =>
      Effect.sync(() => {
        if (killed) {
          listener()
          return noop
        }
        killListeners.add(listener)
        return () => {
          killListeners.delete(listener)
        }
      })

    // v3 Effect.zipRight → v4 Effect.andThen (given an effect, not a function).
    const kill: TurnSignalsShape["kill"] = (options) =>
      Effect.andThen(
        requestStop(options),
        Effect.sync(() => {
          if (killed) return
          killed = true
          const waiting = [...killListeners]
          killListeners.clear()
          for (const listener of waiting) listener()
        })
      )

    const awaitVia = <A>(subscribe: (listener: (value: A) => void) => Effect.Effect<() => void>): Effect.Effect<A> =>
      Effect.suspend(() => {
        const first = makeFirstWins<A>()
        return Effect.flatMap(subscribe(first.settle), (unsubscribe) => Effect.ensuring(first.await, Effect.sync(unsubscribe)))
      })

    return {
      channelId,
      current,
      requestStop,
      requestFollowUp,
      kill,
      clearFollowUp: clearWhen((request) => request._tag === "FollowUp"),
      clearStop: clearWhen((request) => request._tag === "Stop" && request.stopContext === undefined),
      takeStopContext: Effect.sync(() => {
        if (Option.isSome(pending) && pending.value._tag === "Stop" && pending.value.stopContext !== undefined) {
          const stop = pending.value.stopContext
          pending = Option.none()
          return Option.some(stop)
        }
        return Option.none()
      }),
      onRequest,
      onKill,
      awaitRequest: awaitVia(onRequest),
      awaitKill: awaitVia<void>((listener) => onKill(() => listener(undefined))),
      isKilled: Effect.sync(() => killed),
      alarm: makeTurnAlarm()
    }
  })

const noop = () => {}
