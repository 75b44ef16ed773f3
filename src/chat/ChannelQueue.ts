import { Data, Deferred, Effect, Exit, FiberMap, Option, SynchronizedRef } from "effect"
import type { TurnResult } from "../domain/TurnResult"
import type { ImpersonationAbortedError } from "../loop/ImpersonationAbortedError"
import { resetsFollowUpCount } from "../loop/policy"
import { makeTurnSignals, type StopContext, type TurnSignalsShape } from "../loop/TurnSignals"
import { STOP_RESPONSE_NOTE, type TurnInput } from "./TurnInput"
import { TurnRunner } from "./TurnRunner"

/** A queued turn that never ran: /kill cancelled it. */
export class TurnCancelledError extends Data.TaggedError("TurnCancelledError")<{
  readonly channelId: string
}> {
  override get message(): string {
    return `the queued turn in ${this.channelId} was cancelled by /kill`
  }
}

export type TurnFailure = TurnCancelledError | ImpersonationAbortedError

/**
 * After this many follow-up interrupts in a row (no reply finished in between), new messages
 * queue without interrupting, so a busy channel still gets answers instead of endless restarts.
 */
export const MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS = 3

/** A handle on a submitted message. */
export interface TurnTicket {
  readonly channelId: string
  /** The turn's result; fails with TurnCancelledError when /kill cancelled it before it ran. */
  readonly result: Effect.Effect<TurnResult, TurnFailure>
}

interface Entry {
  readonly input: TurnInput
  readonly isFromQueue: boolean
  readonly done: Deferred.Deferred<TurnResult, TurnFailure>
}

interface Active {
  readonly entry: Entry
  readonly signals: TurnSignalsShape
}

interface ChannelState {
  readonly queue: ReadonlyArray<Entry>
  readonly active: Option.Option<Active>
  /** Consecutive follow-up interrupts (spec §2.2: reset by a finished reply, kept otherwise). */
  readonly followUps: number
}

export interface ChannelStatus {
  readonly active: boolean
  readonly queued: number
  readonly followUps: number
}

/** The default stop response: the same conversation, with a note that the user stopped the reply. */
const defaultStopResponse = (input: TurnInput, stop: StopContext): TurnInput => ({
  ...input,
  messageId: stop.originalMessageId ?? input.messageId,
  shouldSurfaceUserErrors: true,
  loadContext: Effect.map(input.loadContext, (items) => [...items, { role: "system", content: STOP_RESPONSE_NOTE }])
})

/**
 * One turn at a time per channel (spec §2.8, design §2). A message arriving while a turn runs
 * asks that turn to yield (follow-up interrupt: a streaming reply stops, a tool chain goes on)
 * and is answered next. /kill cancels the queued turns first, then kills the running one; a
 * stop that carries a context gets its answer queued at the front. A channel's state exists
 * only while it has work, so idle channels cost nothing.
 */
export class ChannelQueue extends Effect.Service<ChannelQueue>()("loopcord/chat/ChannelQueue", {
  scoped: Effect.gen(function*() {
    const runner = yield* TurnRunner
    const workers = yield* FiberMap.make<string>()
    const channels = yield* SynchronizedRef.make<ReadonlyMap<string, ChannelState>>(new Map())

    const withChannel = (all: ReadonlyMap<string, ChannelState>, channelId: string, state: ChannelState | undefined) => {
      const next = new Map(all)
      if (state === undefined) next.delete(channelId)
      else next.set(channelId, state)
      return next
    }

    /** Takes the next entry, or removes the channel when its queue is empty (atomically). */
    const takeNext = (channelId: string) =>
      Effect.flatMap(makeTurnSignals(channelId), (signals) =>
        SynchronizedRef.modify(channels, (all): [Option.Option<Active>, ReadonlyMap<string, ChannelState>] => {
          const state = all.get(channelId)
          const [entry, ...rest] = state?.queue ?? []
          if (state === undefined || entry === undefined) return [Option.none(), withChannel(all, channelId, undefined)]
          const active: Active = { entry, signals }
          return [Option.some(active), withChannel(all, channelId, { ...state, queue: rest, active: Option.some(active) })]
        }))

    const insertFront = (channelId: string, entry: Entry) =>
      SynchronizedRef.update(channels, (all) => {
        const state = all.get(channelId)
        return state === undefined ? all : withChannel(all, channelId, { ...state, queue: [entry, ...state.queue] })
      })

    const stopResponsesFor = (active: Active) => ({
      queue: (stop: StopContext) =>
        Effect.gen(function*() {
          const input = active.entry.input.stopResponse?.(stop) ?? defaultStopResponse(active.entry.input, stop)
          yield* insertFront(input.channelId, { input, isFromQueue: true, done: yield* Deferred.make<TurnResult, TurnFailure>() })
          yield* Effect.logInfo("stop response queued at the front of the channel")
        })
    })

    const worker = (channelId: string): Effect.Effect<void> =>
      Effect.gen(function*() {
        while (true) {
          const next = yield* takeNext(channelId)
          if (Option.isNone(next)) return
          const active = next.value
          const exit = yield* runner.run(active.entry.input, {
            signals: active.signals,
            stopResponses: stopResponsesFor(active),
            isFromQueue: active.entry.isFromQueue
          }).pipe(Effect.exit)
          yield* SynchronizedRef.update(channels, (all) => {
            const state = all.get(channelId)
            if (state === undefined) return all
            const status = Exit.isSuccess(exit) ? exit.value.status : "error"
            const followUps = status === "follow_up_interrupt" ? state.followUps + 1 : resetsFollowUpCount(status) ? 0 : state.followUps
            return withChannel(all, channelId, { ...state, active: Option.none(), followUps })
          })
          yield* Deferred.done(active.entry.done, exit)
        }
      }).pipe(Effect.annotateLogs({ channelId }))

    /** Queues `input` in its channel; answered after the running turn (which is asked to yield). */
    const submit = Effect.fn("ChannelQueue.submit")(function*(input: TurnInput) {
      const done = yield* Deferred.make<TurnResult, TurnFailure>()
      const channelId = input.channelId
      yield* SynchronizedRef.updateEffect(channels, (all) =>
        Effect.gen(function*() {
          const state = all.get(channelId)
          if (state === undefined) {
            yield* FiberMap.run(workers, channelId, worker(channelId))
            return withChannel(all, channelId, { queue: [{ input, isFromQueue: false, done }], active: Option.none(), followUps: 0 })
          }
          const busy = Option.isSome(state.active) || state.queue.length > 0
          if (Option.isSome(state.active) && state.followUps < MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS) {
            yield* state.active.value.signals.requestFollowUp
          }
          return withChannel(all, channelId, { ...state, queue: [...state.queue, { input, isFromQueue: busy, done }] })
        }))
      const ticket: TurnTicket = { channelId, result: Deferred.await(done) }
      return ticket
    })

    /**
     * /kill: cancels the channel's queued turns first, then kills the running one (stream and
     * tool aborted at once). A stop context queues its stop response at the front.
     */
    const kill = Effect.fn("ChannelQueue.kill")(function*(
      channelId: string,
      options: { readonly requesterId?: string; readonly stopContext?: StopContext } = {}
    ) {
      const [cancelled, active] = yield* SynchronizedRef.modify(
        channels,
        (all): [readonly [ReadonlyArray<Entry>, Option.Option<Active>], ReadonlyMap<string, ChannelState>] => {
          const state = all.get(channelId)
          if (state === undefined) return [[[], Option.none()], all]
          return [[state.queue, state.active], withChannel(all, channelId, { ...state, queue: [] })]
        }
      )
      yield* Effect.forEach(cancelled, (entry) => Deferred.fail(entry.done, new TurnCancelledError({ channelId })), { discard: true })
      if (Option.isSome(active)) yield* active.value.signals.kill(options)
      return { cancelled: cancelled.length, killed: Option.isSome(active) }
    })

    const status = (channelId: string) =>
      Effect.map(SynchronizedRef.get(channels), (all): ChannelStatus => {
        const state = all.get(channelId)
        return {
          active: state !== undefined && Option.isSome(state.active),
          queued: state?.queue.length ?? 0,
          followUps: state?.followUps ?? 0
        }
      })

    /** Channels with work (running or queued); idle channels are forgotten. */
    const busyChannels = Effect.map(SynchronizedRef.get(channels), (all) => [...all.keys()])

    return { submit, kill, status, busyChannels } as const
  })
}) {}
