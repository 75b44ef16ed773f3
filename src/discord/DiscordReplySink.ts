import { Clock, Duration, Effect, Fiber, Option, Queue, Random, type Scope } from "effect"
import { DEFAULT_MAX_MESSAGES_PER_TURN } from "../config/DiscordConfig"
import { DeliveryError, type ResponseSink } from "../loop/ResponseSink"
import type { BudgetSlot, ReserveOptions } from "./RequestBudget"
import type { RequestLane } from "./RequestLane"
import { type ReplyWriteError, toDeliveryError } from "./discordErrors"
import { noticeEmbed } from "./noticeEmbed"
import {
  addEmbed,
  appendToLastText,
  continueAfterFrozen,
  embedCount,
  emptyLayout,
  isSettled,
  layoutText,
  newPass,
  planNext,
  recordWrite,
  type ReplyLayout,
  repost
} from "./replyLayout"
import type { ReplyTarget } from "./ReplyTarget"
import { DISCORD_MESSAGE_LIMIT } from "./messageSplitter"
import { makeWatchedRef } from "./WatchedRef"

/** Shown under a reply that /kill stopped (Discord subtext). */
export const STOPPED_MARKER = "\n-# ⏹ stopped"

/**
 * Edits of one message are at least this far apart while text streams (≈ llmcord's 1/s; the
 * REST queue still honours the rate-limit headers, and the request budget spaces them further
 * when many replies stream at once). The last edit of a pass is not held back.
 */
const DEFAULT_MIN_EDIT_INTERVAL = Duration.seconds(1)

/**
 * A server error or network failure that discord.js's own retries (3, at once) did not get
 * through is tried again this many times, after 1 s, 2 s, 4 s, 8 s (15 s in all), before the
 * reply gives up (DeliveryError `failed`).
 */
const DEFAULT_TRANSIENT_RETRIES = 4
const DEFAULT_TRANSIENT_BASE_DELAY = Duration.seconds(1)

/**
 * Reply text a turn may stream beyond what its messages hold: the layout cuts the reply at its
 * last message (with its own marker) well before the loop stops reading the provider.
 */
const CAPACITY_MARGIN = DISCORD_MESSAGE_LIMIT

/** Words are shown whole; a run without whitespace is shown once it gets this long. */
const MAX_HELD_CHARACTERS = 200

interface DiscordReplySinkOptions {
  readonly minEditInterval?: Duration.Input
  /** Waits while one of these rate-limit buckets is empty (so the latest text is sent when it refills). */
  readonly awaitBucket?: (keys: ReadonlyArray<string>) => Effect.Effect<void>
  /**
   * A slot of the request budget for the next write, in its lane: the pass's last text `final`,
   * the reply's first message `first`, any other write `edit` (RequestBudget.reserve). The text is
   * read once the slot is had, so a write that waited sends the newest text. Default: no budget.
   */
  readonly reserve?: (lane: RequestLane, options?: ReserveOptions) => Effect.Effect<BudgetSlot>
  /**
   * At most this many messages carry the reply's text (DISCORD_MAX_MESSAGES_PER_TURN); a longer
   * reply is cut with a marker. Notices are capped at as many again.
   */
  readonly maxMessages?: number
  /** Tries after a transient failure, and the pause before the first (doubling after each). */
  readonly transientRetries?: number
  readonly transientBaseDelay?: Duration.Input
}

export interface DiscordReplySink {
  readonly sink: ResponseSink["Service"]
  /** Waits until every message shows its latest text (edits not held back meanwhile). */
  readonly drain: Effect.Effect<void, DeliveryError>
  /** Marks the reply as stopped by /kill (the partial text stays). */
  readonly markStopped: Effect.Effect<void, DeliveryError>
  /** When a message was last sent or edited (0 before the first): typing pauses while text streams. */
  readonly lastWriteAt: Effect.Effect<number>
  /** Ids of the messages posted so far, in order. */
  readonly messageIds: Effect.Effect<ReadonlyArray<string>>
}

interface State {
  readonly layout: ReplyLayout
  /** Written but not shown yet: the unfinished word. */
  readonly pending: string
  /** Text committed in earlier passes (the current pass's is the layout's `passText`). */
  readonly deliveredBefore: string
  /** A final failure: delivery stopped for the rest of the turn. */
  readonly failure: Option.Option<DeliveryError>
  /** Ignore the edit interval (a pass is ending). */
  readonly urgent: boolean
  /** A request is in flight. */
  readonly busy: boolean
  readonly lastWriteAt: number
  /** Transient failures in a row, and when the next try may go. */
  readonly transientFailures: number
  readonly retryAt: number
  /** Messages posted again or continued after Discord refused an edit (bounded: Discord could refuse forever). */
  readonly recoveries: number
  /** Notices beyond the cap (logged, not posted). */
  readonly droppedNotices: number
}

const delivered = (s: State): string => s.deliveredBefore + s.layout.passText

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff

/** How much of `pending` can be shown now: through its last whitespace, or a long run (surrogate-safe). */
export const commitPoint = (pending: string): number => {
  const lastSpace = Math.max(pending.lastIndexOf(" "), pending.lastIndexOf("\n"), pending.lastIndexOf("\t"))
  if (lastSpace !== -1) return lastSpace + 1
  if (pending.length < MAX_HELD_CHARACTERS) return 0
  return isHighSurrogate(pending.charCodeAt(pending.length - 1)) ? pending.length - 1 : pending.length
}

/**
 * A turn's ResponseSink that streams into Discord: text shows at word boundaries in messages of
 * at most 2000 characters (fences closed and reopened), one request in flight at a time, edits
 * coalesced to the latest text; notices become embeds. What Discord refuses is handled by its
 * kind (ReplyWriteError): a deleted message is posted again, one that can no longer be edited
 * is continued in a new message, a transient failure is tried again with backoff on the Clock;
 * a final one (channel gone, access lost, retries used up) fails the sink with its
 * DeliveryError for the rest of the turn: a DeliveryError the loop sees is always final. The
 * worker lives in the given scope.
 */
export const makeDiscordReplySink = (
  target: ReplyTarget,
  options: DiscordReplySinkOptions = {}
): Effect.Effect<DiscordReplySink, never, Scope.Scope> =>
  Effect.gen(function*() {
    const minEditInterval = Duration.toMillis(Duration.fromInputUnsafe(options.minEditInterval ?? DEFAULT_MIN_EDIT_INTERVAL))
    const awaitBucket = options.awaitBucket ?? (() => Effect.void)
    const reserve = options.reserve ?? (() => Effect.succeed<BudgetSlot>({ commit: Effect.void, release: Effect.void }))
    const maxMessages = Math.max(1, Math.floor(options.maxMessages ?? DEFAULT_MAX_MESSAGES_PER_TURN))
    const transientRetries = Math.max(0, Math.floor(options.transientRetries ?? DEFAULT_TRANSIENT_RETRIES))
    const transientBaseDelay = Duration.toMillis(Duration.fromInputUnsafe(options.transientBaseDelay ?? DEFAULT_TRANSIENT_BASE_DELAY))
    // Discord could refuse every edit of every message: recovering has a budget too.
    const maxRecoveries = Math.max(3, maxMessages)
    // Bot messages carry a nonce (Discord returns the existing message for a retried post that had gone through).
    const noncePrefix = (yield* Random.nextIntBetween(0, 2 ** 31)).toString(36)
    const state = yield* makeWatchedRef<State>({
      layout: emptyLayout(DISCORD_MESSAGE_LIMIT, maxMessages),
      pending: "",
      deliveredBefore: "",
      failure: Option.none(),
      urgent: false,
      busy: false,
      lastWriteAt: 0,
      transientFailures: 0,
      retryAt: 0,
      recoveries: 0,
      droppedNotices: 0
    })
    const wake = yield* Queue.sliding<void>(1)
    const poke = Queue.offer(wake, undefined)
    const log = (message: string) => Effect.logWarning(message).pipe(Effect.annotateLogs({ channelId: target.channelId }))

    /** What a refused write does to the state, and the line logged about it. */
    const onFailure = (s: State, index: number, error: ReplyWriteError, now: number): readonly [string, State] => {
      const idle = { ...s, busy: false }
      const giveUp = (why: string): readonly [string, State] => {
        const failure = error.kind === "final" ? toDeliveryError(error) : new DeliveryError({ reason: "failed", detail: `${why}: ${error.detail}` })
        return [`Discord delivery failed (${failure.reason}); the reply is not delivered: ${failure.detail}`, { ...idle, failure: Option.some(failure) }]
      }
      switch (error.kind) {
        case "final":
          return giveUp("refused")
        case "transient": {
          const failures = s.transientFailures + 1
          if (failures > transientRetries) return giveUp(`Discord still failing after ${failures} tries`)
          const delay = transientBaseDelay * 2 ** (failures - 1)
          return [`Discord write failed (${error.detail}); trying again in ${delay} ms (${failures} of ${transientRetries})`, { ...idle, transientFailures: failures, retryAt: now + delay }]
        }
        case "gone":
        case "frozen": {
          if (s.recoveries >= maxRecoveries) return giveUp(`Discord refused edits ${s.recoveries + 1} times`)
          const layout = error.kind === "gone" ? repost(s.layout, index) : continueAfterFrozen(s.layout, index)
          const what = error.kind === "gone" ? "was deleted; posting its text again" : "can no longer be edited; the reply continues in a new message"
          return [`Discord reply message ${what} (${error.detail})`, { ...idle, layout, recoveries: s.recoveries + 1, transientFailures: 0 }]
        }
      }
    }

    /** The lane of the next write: the end of a pass first, then a reply's first message, then edits. */
    const laneOf = (s: State): RequestLane =>
      s.urgent ? "final" : s.layout.slots.every((slot) => slot.messageId === undefined) ? "first" : "edit"
    /** Completes once the pass is ending (a write waiting for its slot then waits as `final`). */
    const untilUrgent = Effect.asVoid(state.waitFor((s) => s.urgent))

    /** Posts or edits message `index` with its latest text; what Discord refuses is handled by its kind. */
    const perform = (index: number) =>
      Effect.gen(function*() {
        yield* state.update((s) => ({ ...s, busy: true }))
        yield* awaitBucket(yield* target.rateLimitKeys)
        const lane = laneOf(yield* state.get)
        yield* Effect.acquireUseRelease(
          Effect.interruptible(reserve(lane, lane === "final" ? {} : { promoteWhen: untilUrgent })),
          (slot) => write(index, { lane, slot }),
          (slot) => slot.release
        )
      })

    const write = (index: number, ticket: { readonly lane: RequestLane; readonly slot: BudgetSlot }) =>
      Effect.gen(function*() {
        // Read after waiting: the latest text is what gets sent.
        const slot = (yield* state.get).layout.slots[index]
        if (slot === undefined) return yield* state.update((s) => ({ ...s, busy: false }))
        const content = slot.desired._tag === "Text" ? slot.desired.content : undefined
        const shownBody = slot.source?.body.length ?? 0
        const messageId = slot.messageId
        const result = yield* Effect.result(
          messageId === undefined || content === undefined
            ? target.send(slot.desired, { nonce: `${noncePrefix}.${slot.serial}`, ticket })
            : Effect.as(target.edit(messageId, content, { ticket }), messageId)
        )
        const now = yield* Clock.currentTimeMillis
        const line = yield* state.modify((s): readonly [string | undefined, State] =>
          result._tag === "Failure"
            ? onFailure(s, index, result.failure, now)
            : [undefined, {
              ...s,
              busy: false,
              lastWriteAt: now,
              transientFailures: 0,
              layout: recordWrite(s.layout, index, { messageId: result.success, shown: content, shownBody, at: now })
            }])
        if (line !== undefined) yield* log(line)
      })

    const worker = Effect.gen(function*() {
      for (;;) {
        const current = yield* state.get
        if (Option.isSome(current.failure)) return
        const now = yield* Clock.currentTimeMillis
        if (current.retryAt > now) {
          yield* Effect.sleep(Duration.millis(current.retryAt - now))
          continue
        }
        const step = planNext(current.layout.slots, now, current.urgent ? 0 : minEditInterval)
        switch (step._tag) {
          case "Idle":
            yield* Queue.take(wake)
            break
          case "Wait":
            yield* Effect.raceFirst(Effect.sleep(Duration.millis(step.until - now)), Queue.take(wake))
            break
          default:
            yield* perform(step.index)
        }
      }
    })
    const workerFiber = yield* Effect.forkScoped(worker)

    const failIfFailed = Effect.flatMap(state.get, (s) => Option.match(s.failure, { onNone: () => Effect.void, onSome: Effect.fail }))

    /** Shows committed text now: waits until every message is posted with its latest text. */
    const drain: Effect.Effect<void, DeliveryError> = Effect.gen(function*() {
      yield* state.update((s) => ({ ...s, urgent: true }))
      yield* poke
      yield* state.waitFor((s) => Option.isSome(s.failure) || (!s.busy && isSettled(s.layout.slots))).pipe(
        // The worker only ends on a failure (kept in the state) or a defect.
        Effect.raceFirst(Fiber.await(workerFiber))
      )
      const settled = yield* state.updateAndGet((s) => ({ ...s, urgent: false }))
      if (Option.isSome(settled.failure)) return yield* Effect.fail(settled.failure.value)
      if (!isSettled(settled.layout.slots)) {
        return yield* Effect.fail(new DeliveryError({ reason: "failed", detail: "Discord delivery stopped unexpectedly" }))
      }
    })

    /** Lays out the pending text (through its last word unless `all`); logs when the reply reaches its cap. */
    const commit = (all: boolean) =>
      Effect.flatMap(
        state.modify((s): readonly [boolean, State] => {
          const cut = all ? s.pending.length : commitPoint(s.pending)
          if (cut === 0) return [false, s]
          const layout = layoutText(s.layout, s.layout.passText + s.pending.slice(0, cut))
          return [layout.cut && !s.layout.cut, { ...s, pending: s.pending.slice(cut), layout }]
        }),
        (newlyCut) =>
          newlyCut
            ? log(`Discord reply cut at ${maxMessages} messages (DISCORD_MAX_MESSAGES_PER_TURN); the rest of the text is not shown`)
            : Effect.void
      )

    /** The partial reply stays; its last message gets the stopped marker (once). */
    const markStopped = Effect.andThen(
      Effect.andThen(commit(true), state.update((s) => ({ ...s, layout: appendToLastText(s.layout, STOPPED_MARKER) }))),
      poke
    )

    /** A notice below the reply, within the notice cap (beyond: logged once, not posted). */
    const addNotice = (embed: Parameters<typeof addEmbed>[1]) =>
      Effect.flatMap(
        state.modify((s): readonly [boolean, State] =>
          embedCount(s.layout) < maxMessages
            ? [false, { ...s, layout: addEmbed(s.layout, embed) }]
            : [s.droppedNotices === 0, { ...s, droppedNotices: s.droppedNotices + 1 }]),
        (firstDropped) => (firstDropped ? log(`Discord reply has ${maxMessages} notices already; later ones are only logged`) : Effect.void)
      ).pipe(Effect.andThen(poke))

    const sink: ResponseSink["Service"] = {
      write: (delta) =>
        Effect.gen(function*() {
          yield* failIfFailed
          if (delta.length === 0) return
          yield* state.update((s) => ({ ...s, pending: s.pending + delta }))
          yield* commit(false)
          yield* poke
        }),
      endPass: (mode) =>
        Effect.gen(function*() {
          if (mode === "flush") {
            yield* commit(true)
          } else {
            yield* state.update((s) => ({ ...s, pending: "" }))
          }
          yield* drain
          return yield* state.modify((s) => [
            s.layout.passText,
            { ...s, deliveredBefore: delivered(s), layout: newPass(s.layout) }
          ])
        }),
      delivered: Effect.map(state.get, delivered),
      capacity: maxMessages * DISCORD_MESSAGE_LIMIT + CAPACITY_MARGIN,
      notice: (notice) =>
        notice._tag === "Stopped"
          ? markStopped
          : Effect.flatMap(Effect.sync(() => noticeEmbed(notice)), addNotice)
    }

    return {
      sink,
      drain,
      markStopped: Effect.andThen(markStopped, drain),
      lastWriteAt: Effect.map(state.get, (s) => s.lastWriteAt),
      messageIds: Effect.map(state.get, (s) =>
        s.layout.slots.flatMap((slot) => (slot.messageId === undefined ? [] : [slot.messageId])))
    }
  })
