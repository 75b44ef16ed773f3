import { Clock, Context, Duration, Effect, Option } from "effect"
import { makeFirstWins } from "./FirstWins"
import { makeTurnAlarm, type TurnAlarm } from "./TurnAlarm"

/** Who asked to stop and where to answer; a stop carrying it gets a stop response queued first. */
export interface StopContext {
  readonly requesterId: string
  /** Front id of the /kill interaction or message, for the stop response. */
  readonly originalMessageId?: string
}

/** A pending request against the channel's running turn. */
export type TurnRequest =
  | { readonly _tag: "Stop"; readonly requesterId: string | undefined; readonly stopContext: StopContext | undefined; readonly at: number }
  | { readonly _tag: "FollowUp"; readonly at: number }

/** Entries older than this are stale and ignored. */
const STALE_REQUEST_AFTER = Duration.minutes(5)

/**
 * Kill and follow-up signals of one channel's turns. A stop wins over a follow-up; a follow-up
 * never turns a tool chain into `stopped_by_user`. `kill` additionally aborts the running stream
 * and tool at once.
 */
export interface TurnSignalsShape {
  readonly channelId: string
  /** The pending request, if any and not stale. */
  readonly current: Effect.Effect<Option.Option<TurnRequest>>
  readonly requestStop: (options?: { readonly requesterId?: string; readonly stopContext?: StopContext }) => Effect.Effect<void>
  /** Ignored while a stop is registered. */
  readonly requestFollowUp: Effect.Effect<void>
  /** /kill: register the stop, then abort the running stream and tool. */
  readonly kill: (options?: { readonly requesterId?: string; readonly stopContext?: StopContext }) => Effect.Effect<void>
  readonly clearFollowUp: Effect.Effect<void>
  /** Clears a stop unless it carries a stop context (kept until `takeStopContext`). */
  readonly clearStop: Effect.Effect<void>
  /** Takes the stop context (and the stop) if there is one. */
  readonly takeStopContext: Effect.Effect<Option.Option<StopContext>>
  /**
   * Calls `listener` once, synchronously, with the first fresh request (stop or follow-up)
   * registered from now on or already pending; returns the unsubscribe. Lets a pass wait on
   * requests without a fiber that only waits.
   */
  readonly onRequest: (listener: (request: TurnRequest) => void) => Effect.Effect<() => void>
  /** Calls `listener` once, synchronously, when the turn is killed (at once if it already was); returns the unsubscribe. */
  readonly onKill: (listener: () => void) => Effect.Effect<() => void>
  /** Completes with the first fresh request (stop or follow-up) registered from now on or already pending. */
  readonly awaitRequest: Effect.Effect<TurnRequest>
  /** Completes when the turn is killed. */
  readonly awaitKill: Effect.Effect<void>
  readonly isKilled: Effect.Effect<boolean>
  /** The turn's pass and tool-call deadlines, watched by one fiber. */
  readonly alarm: TurnAlarm
}

export class TurnSignals extends Context.Service<TurnSignals, TurnSignalsShape>()("loopcord/loop/TurnSignals") {}

const isFresh = (request: TurnRequest, now: number) => now - request.at < Duration.toMillis(STALE_REQUEST_AFTER)

/** Signals for one turn of `channelId`. */
export const makeTurnSignals = (channelId: string): Effect.Effect<TurnSignalsShape> =>
  Effect.sync(() => {
    // Plain state: every access is one synchronous step of whichever fiber runs it, and the
    // listeners let a pass or a tool call wait on a signal without a fiber of its own.
    let pending: Option.Option<TurnRequest> = Option.none()
    let killed = false
    const requestListeners = new Set<(request: TurnRequest) => void>()
    const killListeners = new Set<() => void>()

    const freshAt = (now: number) => Option.filter(pending, (request) => isFresh(request, now))

    /** Hands the pending request (if fresh) to everyone waiting; each listener is called once. */
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

    /** Waits on a listener registration; the listener is removed however the wait ends. */
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
