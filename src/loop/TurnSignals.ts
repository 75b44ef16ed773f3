import { Clock, Context, Deferred, Duration, Effect, Option, Ref } from "effect"

/** Who asked to stop and where to answer; a stop carrying it gets a stop response queued first. */
export interface StopContext {
  readonly requesterId: string
  /** Front id of the /kill interaction or message, for the stop response. */
  readonly originalMessageId?: string
}

/** A pending request against the channel's running turn (spec §2.8 stop registry). */
export type TurnRequest =
  | { readonly _tag: "Stop"; readonly requesterId: string | undefined; readonly stopContext: StopContext | undefined; readonly at: number }
  | { readonly _tag: "FollowUp"; readonly at: number }

/** Entries older than this are stale and ignored (spec §2.8). */
export const STALE_REQUEST_AFTER = Duration.minutes(5)

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
  /** Completes with the first fresh request (stop or follow-up) registered from now on or already pending. */
  readonly awaitRequest: Effect.Effect<TurnRequest>
  /** Completes when the turn is killed. */
  readonly awaitKill: Effect.Effect<void>
  readonly isKilled: Effect.Effect<boolean>
}

export class TurnSignals extends Context.Tag("loopcord/loop/TurnSignals")<TurnSignals, TurnSignalsShape>() {}

const isFresh = (request: TurnRequest, now: number) => now - request.at < Duration.toMillis(STALE_REQUEST_AFTER)

/** Signals for one turn of `channelId`. */
export const makeTurnSignals = (channelId: string): Effect.Effect<TurnSignalsShape> =>
  Effect.gen(function*() {
    const pending = yield* Ref.make<Option.Option<TurnRequest>>(Option.none())
    // Completed (and replaced) whenever a request is registered: wakes the fibers in awaitRequest.
    const registered = yield* Ref.make(yield* Deferred.make<void>())
    const killed = yield* Deferred.make<void>()

    const notify = Effect.flatMap(Deferred.make<void>(), (next) =>
      Effect.flatMap(Ref.getAndSet(registered, next), (previous) => Deferred.succeed(previous, undefined)))

    const current = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      return Option.filter(yield* Ref.get(pending), (request) => isFresh(request, now))
    })

    const requestStop: TurnSignalsShape["requestStop"] = (options = {}) =>
      Effect.flatMap(Clock.currentTimeMillis, (at) =>
        Effect.zipRight(Ref.set(pending, Option.some({
          _tag: "Stop",
          requesterId: options.requesterId,
          stopContext: options.stopContext,
          at
        })), notify))

    const requestFollowUp = Effect.flatMap(Clock.currentTimeMillis, (at) =>
      Effect.zipRight(Ref.update(pending, (existing) =>
        Option.isSome(existing) && existing.value._tag === "Stop" ? existing : Option.some({ _tag: "FollowUp", at })), notify))

    const clearWhen = (predicate: (request: TurnRequest) => boolean) =>
      Ref.update(pending, (existing) =>
        Option.isSome(existing) && predicate(existing.value) ? Option.none() : existing)

    // The wake-up is read before the pending request, so a registration in between is never missed.
    const awaitRequest: Effect.Effect<TurnRequest> = Effect.gen(function*() {
      while (true) {
        const wake = yield* Ref.get(registered)
        const request = yield* current
        if (Option.isSome(request)) return request.value
        yield* Deferred.await(wake)
      }
    })

    return {
      channelId,
      current,
      requestStop,
      requestFollowUp,
      kill: (options) => Effect.zipRight(requestStop(options), Deferred.succeed(killed, undefined)),
      clearFollowUp: clearWhen((request) => request._tag === "FollowUp"),
      clearStop: clearWhen((request) => request._tag === "Stop" && request.stopContext === undefined),
      takeStopContext: Ref.modify(pending, (existing) =>
        Option.isSome(existing) && existing.value._tag === "Stop" && existing.value.stopContext !== undefined
          ? [Option.some(existing.value.stopContext), Option.none()]
          : [Option.none(), existing]),
      awaitRequest,
      awaitKill: Deferred.await(killed),
      isKilled: Deferred.isDone(killed)
    }
  })
