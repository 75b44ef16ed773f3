import { Context, Data, Deferred, Duration, Effect, Exit, FiberMap, Layer, Option, Ref, SynchronizedRef } from "effect"
import { ChatConfig } from "../config/ChatConfig"
import type { ChatMessage } from "../domain/ChatMessage"
import type { TurnResult } from "../domain/TurnResult"
import type { ImpersonationAbortedError } from "../loop/ImpersonationAbortedError"
import { resetsFollowUpCount } from "../loop/policy"
import { makeTurnSignals, type StopContext, type TurnSignalsShape } from "../loop/TurnSignals"
import { STOP_RESPONSE_NOTE, type TurnInput } from "./TurnInput"
import { TurnRunner } from "./TurnRunner"

/** A queued turn that never ran: /kill cancelled it, or the bot is shutting down (`drain`). */
class TurnCancelledError extends Data.TaggedError("TurnCancelledError")<{
  readonly channelId: string
  readonly reason?: "shutdown"
}> {
  override get message(): string {
    return this.reason === "shutdown"
      ? `the message in ${this.channelId} was not taken: the bot is shutting down`
      : `the queued turn in ${this.channelId} was cancelled by /kill`
  }
}

/** How a drain ended: every turn finished in the grace period, or some were stopped. */
interface DrainOutcome {
  /** Channels whose turns were still running or waiting when the grace period ran out. */
  readonly stoppedChannels: number
}

export type TurnFailure = TurnCancelledError | ImpersonationAbortedError

/**
 * After this many follow-up interrupts in a row (no reply finished in between), new messages
 * queue without interrupting, so a busy channel still gets answers instead of endless restarts.
 */
export const MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS = 3

/**
 * Messages a folded turn carries for its context at most (the newest are kept): enough for a
 * conversation, bounded against a flood. Fronts whose context is the channel's history carry none.
 */
export const FOLDED_MESSAGES_KEPT = 20

/** A handle on a submitted message. */
interface TurnTicket {
  readonly channelId: string
  /**
   * The result of the turn that answered the message; fails with TurnCancelledError when /kill
   * cancelled it before it ran. A message folded into a later one's turn (the channel's queue
   * was full) shares that turn: its ticket resolves with the same result, when that turn ends.
   */
  readonly result: Effect.Effect<TurnResult, TurnFailure>
}

interface Entry {
  readonly input: TurnInput
  readonly isFromQueue: boolean
  /** Shared by every message folded into this turn. */
  readonly done: Deferred.Deferred<TurnResult, TurnFailure>
  /** A stop response: queued at the front, never counted against the bound, never folded into. */
  readonly isStopResponse: boolean
  /** Folded messages the turn's own context may lack (`TurnInput.message`), oldest first, bounded. */
  readonly folded: ReadonlyArray<ChatMessage>
  readonly foldedCount: number
}

const newEntry = (input: TurnInput, done: Entry["done"], options: { readonly isFromQueue: boolean; readonly isStopResponse?: boolean }): Entry => ({
  input,
  isFromQueue: options.isFromQueue,
  done,
  isStopResponse: options.isStopResponse ?? false,
  folded: [],
  foldedCount: 0
})

/** `waiting` answers `newer` instead: the newest message is answered, the earlier ones are context. */
const foldInto = (waiting: Entry, newer: TurnInput): Entry => ({
  input: newer,
  isFromQueue: true,
  done: waiting.done,
  isStopResponse: false,
  folded: (waiting.input.message === undefined ? waiting.folded : [...waiting.folded, waiting.input.message]).slice(-FOLDED_MESSAGES_KEPT),
  foldedCount: waiting.foldedCount + 1
})

/** The folded messages the context does not hold yet go right before its last item (the message answered). */
export const withFoldedMessages = (context: ReadonlyArray<ChatMessage>, folded: ReadonlyArray<ChatMessage>): ReadonlyArray<ChatMessage> => {
  const missing = folded.filter((message) =>
    !context.some((item) => item === message || (message.messageId !== undefined && item.messageId === message.messageId)))
  return missing.length === 0 ? context : [...context.slice(0, -1), ...missing, ...context.slice(-1)]
}

/** The input a queued entry runs with: its own, plus the folded messages in its context. */
const effectiveInput = (entry: Entry): TurnInput =>
  entry.folded.length === 0
    ? entry.input
    : { ...entry.input, loadContext: Effect.map(entry.input.loadContext, (context) => withFoldedMessages(context, entry.folded)) }

/** Where a submitted message went: the result it waits for, and the turn it folded into, if it did. */
type Placement = readonly [Entry["done"], Option.Option<Entry>]

interface Active {
  readonly entry: Entry
  readonly signals: TurnSignalsShape
}

interface ChannelState {
  readonly queue: ReadonlyArray<Entry>
  readonly active: Option.Option<Active>
  /**
   * Consecutive follow-up interrupts: reset by a finished reply, kept otherwise
   * (docs/architecture.md, Follow-up interrupts).
   */
  readonly followUps: number
}

interface ChannelStatus {
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

const make = Effect.gen(function*() {
  const runner = yield* TurnRunner
  const { channelQueueMax } = yield* ChatConfig
  const workers = yield* FiberMap.make<string>()
  const channels = yield* SynchronizedRef.make<ReadonlyMap<string, ChannelState>>(new Map())
  /** False once `drain` began: no message is taken any more. */
  const accepting = yield* Ref.make(true)

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
        const active: Active = { entry: { ...entry, input: effectiveInput(entry) }, signals }
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
        yield* insertFront(input.channelId, newEntry(input, yield* Deferred.make<TurnResult, TurnFailure>(), { isFromQueue: true, isStopResponse: true }))
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
          isFromQueue: active.entry.isFromQueue,
          isStopResponse: active.entry.isStopResponse
        }).pipe(Effect.exit)
        // The result resumes its waiter at once, on this stack: the channel is updated first (and
        // forgotten when nothing waits), so what the waiter sees of the queue is already true.
        // Uninterruptible: a worker replaced once its channel is forgotten still hands its result.
        const idle = yield* Effect.uninterruptible(Effect.flatMap(
          SynchronizedRef.modify(channels, (all): [boolean, ReadonlyMap<string, ChannelState>] => {
            const state = all.get(channelId)
            if (state === undefined) return [true, all]
            if (state.queue.length === 0) return [true, withChannel(all, channelId, undefined)]
            const status = Exit.isSuccess(exit) ? exit.value.status : "error"
            const followUps = status === "follow_up_interrupt" ? state.followUps + 1 : resetsFollowUpCount(status) ? 0 : state.followUps
            return [false, withChannel(all, channelId, { ...state, active: Option.none(), followUps })]
          }),
          (idle) => Effect.as(Deferred.done(active.entry.done, exit), idle)
        ))
        if (idle) return
      }
    }).pipe(Effect.annotateLogs({ channelId }))

  /**
   * Queues `input` in its channel; answered after the running turn (which is asked to yield).
   * With the queue full, it folds into the newest waiting turn (and shares its ticket result).
   */
  const submit = Effect.fn("ChannelQueue.submit")(function*(input: TurnInput) {
    const fresh = yield* Deferred.make<TurnResult, TurnFailure>()
    const channelId = input.channelId
    if (!(yield* Ref.get(accepting))) {
      // Shutting down: the running turn is neither interrupted nor joined by this message.
      yield* Effect.logInfo("shutting down: message not taken").pipe(Effect.annotateLogs({ channelId, messageId: input.messageId ?? "" }))
      const refused: TurnTicket = { channelId, result: Effect.fail(new TurnCancelledError({ channelId, reason: "shutdown" })) }
      return refused
    }
    const [done, folded] = yield* SynchronizedRef.modifyEffect(channels, (all) =>
      Effect.gen(function*(): Effect.fn.Return<readonly [Placement, ReadonlyMap<string, ChannelState>]> {
        const state = all.get(channelId)
        if (state === undefined) {
          // Started after this submit returns: a worker that started at once would take this message
          // before a message right behind it could queue, and that one would interrupt it.
          yield* FiberMap.run(workers, channelId, worker(channelId), { startImmediately: false })
          return [[fresh, Option.none()], withChannel(all, channelId, { queue: [newEntry(input, fresh, { isFromQueue: false })], active: Option.none(), followUps: 0 })]
        }
        const busy = Option.isSome(state.active) || state.queue.length > 0
        // A stop response is one short acknowledgement: it is not interrupted, the message waits for its end.
        const interruptible = Option.filter(state.active, (active) => !active.entry.isStopResponse)
        if (Option.isSome(interruptible) && state.followUps < MAX_CONSECUTIVE_FOLLOW_UP_INTERRUPTS) {
          yield* interruptible.value.signals.requestFollowUp
        }
        const newest = state.queue.findLastIndex((entry) => !entry.isStopResponse)
        const waiting = state.queue.filter((entry) => !entry.isStopResponse).length
        const target = state.queue[newest]
        if (waiting < channelQueueMax || target === undefined) {
          return [[fresh, Option.none()], withChannel(all, channelId, { ...state, queue: [...state.queue, newEntry(input, fresh, { isFromQueue: busy })] })]
        }
        const merged = foldInto(target, input)
        const queue = state.queue.map((entry, index) => (index === newest ? merged : entry))
        return [[target.done, Option.some(merged)], withChannel(all, channelId, { ...state, queue })]
      }))
    if (Option.isSome(folded)) {
      yield* Effect.logInfo(
        `channel queue full (${channelQueueMax} waiting): message folded into the newest waiting turn, which now answers it (${folded.value.foldedCount} folded so far)`
      ).pipe(Effect.annotateLogs({ channelId, messageId: input.messageId ?? "" }))
    }
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

  /**
   * Graceful shutdown: stops taking messages, lets the running and waiting turns finish for up
   * to `grace`, then does what /kill does in every busy channel (waiting turns cancelled, the
   * running one stopped: its reply keeps the text with the stop mark, no stop response) and
   * waits at most `settle` for those turns to wrap up.
   */
  const drain = Effect.fn("ChannelQueue.drain")(function*(grace: Duration.Input, settle: Duration.Input = Duration.seconds(5)) {
    // Workers never fail: the channels are idle once their workers are gone. Interruptible, so
    // the deadlines hold when the drain runs in a finalizer (uninterruptible by default).
    const idle = Effect.interruptible(Effect.ignore(FiberMap.awaitEmpty(workers)))
    yield* Ref.set(accepting, false)
    const finished = yield* Effect.timeoutOption(idle, grace)
    if (Option.isSome(finished)) return { stoppedChannels: 0 } satisfies DrainOutcome
    const busy = yield* busyChannels
    yield* Effect.forEach(busy, (channelId) => kill(channelId), { discard: true })
    yield* Effect.timeoutOption(idle, settle)
    return { stoppedChannels: busy.length } satisfies DrainOutcome
  })

  return { submit, kill, status, busyChannels, drain } as const
})

/**
 * One turn at a time per channel (docs/architecture.md, Turns and channels). A message arriving
 * while a turn runs asks that turn to yield (follow-up interrupt: a streaming reply stops, a tool
 * chain goes on) and is answered next. At most `CHANNEL_QUEUE_MAX` turns wait: a message beyond
 * folds into the newest waiting turn, which then answers it with the earlier ones in its context,
 * so a flood costs at most that many model turns. /kill cancels the queued turns first, then kills
 * the running one; a stop that carries a context gets its answer queued at the front (not counted
 * against the bound). A channel's state exists only while it has work, so idle channels cost
 * nothing.
 */
export class ChannelQueue extends Context.Service<ChannelQueue, Effect.Success<typeof make>>()("loopcord/chat/ChannelQueue") {
  static readonly Default: Layer.Layer<ChannelQueue, never, TurnRunner> = Layer.effect(ChannelQueue, make)
}
