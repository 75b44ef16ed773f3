import { Clock, type Context, Duration, Effect, Fiber, Option, Queue, type Scope, Stream, SubscriptionRef } from "effect"
import { DeliveryError, type ResponseSink } from "../loop/ResponseSink"
import { noticeEmbed } from "./noticeEmbed"
import {
  addEmbed,
  appendToLastText,
  emptyLayout,
  isSettled,
  layoutText,
  newPass,
  planNext,
  recordWrite,
  type ReplyLayout
} from "./replyLayout"
import type { ReplyTarget } from "./ReplyTarget"

/** Shown under a reply that /kill stopped (Discord subtext). */
export const STOPPED_MARKER = "\n-# ⏹ stopped"

/**
 * Edits of one message are at least this far apart while text streams (≈ llmcord's 1/s; the
 * REST queue still honours the rate-limit headers). The last edit of a pass is not held back.
 */
export const DEFAULT_MIN_EDIT_INTERVAL = Duration.seconds(1)

/** Words are shown whole; a run without whitespace is shown once it gets this long. */
const MAX_HELD_CHARACTERS = 200

export interface DiscordReplySinkOptions {
  readonly minEditInterval?: Duration.DurationInput
  /** Waits while one of these rate-limit buckets is empty (so the latest text is sent when it refills). */
  readonly awaitBucket?: (keys: ReadonlyArray<string>) => Effect.Effect<void>
}

export interface DiscordReplySink {
  readonly sink: Context.Tag.Service<ResponseSink>
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
  /** All text committed this turn. */
  readonly delivered: string
  readonly failure: Option.Option<DeliveryError>
  /** Ignore the edit interval (a pass is ending). */
  readonly urgent: boolean
  /** A request is in flight. */
  readonly busy: boolean
  readonly lastWriteAt: number
}

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
 * coalesced to the latest text; notices become embeds. A failed send ends the turn with its
 * DeliveryError (channel deleted, access lost). The worker lives in the given scope.
 */
export const makeDiscordReplySink = (
  target: ReplyTarget,
  options: DiscordReplySinkOptions = {}
): Effect.Effect<DiscordReplySink, never, Scope.Scope> =>
  Effect.gen(function*() {
    const minEditInterval = Duration.toMillis(Duration.decode(options.minEditInterval ?? DEFAULT_MIN_EDIT_INTERVAL))
    const awaitBucket = options.awaitBucket ?? (() => Effect.void)
    const state = yield* SubscriptionRef.make<State>({
      layout: emptyLayout(),
      pending: "",
      delivered: "",
      failure: Option.none(),
      urgent: false,
      busy: false,
      lastWriteAt: 0
    })
    const wake = yield* Queue.sliding<void>(1)
    const poke = Queue.offer(wake, undefined)

    /** Posts or edits message `index` with its latest text; a failure is kept and stops delivery for the rest of the turn. */
    const perform = (index: number) =>
      Effect.gen(function*() {
        yield* SubscriptionRef.update(state, (s) => ({ ...s, busy: true }))
        yield* awaitBucket(yield* target.rateLimitKeys)
        // Read after waiting: the latest text is what gets sent.
        const slot = (yield* SubscriptionRef.get(state)).layout.slots[index]
        if (slot === undefined) return yield* SubscriptionRef.update(state, (s) => ({ ...s, busy: false }))
        const content = slot.desired._tag === "Text" ? slot.desired.content : undefined
        const result = yield* Effect.either(
          slot.messageId === undefined || content === undefined ? target.send(slot.desired) : target.edit(slot.messageId, content)
        )
        const now = yield* Clock.currentTimeMillis
        yield* SubscriptionRef.update(state, (s) =>
          result._tag === "Left"
            ? { ...s, busy: false, failure: Option.some(result.left) }
            : { ...s, busy: false, lastWriteAt: now, layout: recordWrite(s.layout, index, { messageId: result.right, shown: content, at: now }) })
        if (result._tag === "Left") {
          yield* Effect.logWarning(`Discord delivery failed (${result.left.reason}): ${result.left.detail}`).pipe(
            Effect.annotateLogs({ channelId: target.channelId })
          )
        }
      })

    const worker = Effect.gen(function*() {
      for (;;) {
        const current = yield* SubscriptionRef.get(state)
        if (Option.isSome(current.failure)) return
        const now = yield* Clock.currentTimeMillis
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

    const failIfFailed = Effect.flatMap(SubscriptionRef.get(state), (s) => Option.match(s.failure, { onNone: () => Effect.void, onSome: Effect.fail }))

    /** Shows committed text now: waits until every message is posted with its latest text. */
    const drain: Effect.Effect<void, DeliveryError> = Effect.gen(function*() {
      yield* SubscriptionRef.update(state, (s) => ({ ...s, urgent: true }))
      yield* poke
      yield* state.changes.pipe(
        Stream.filter((s) => Option.isSome(s.failure) || (!s.busy && isSettled(s.layout.slots))),
        Stream.runHead,
        // The worker only ends on a failure (kept in the state) or a defect.
        Effect.raceFirst(Fiber.await(workerFiber))
      )
      const settled = yield* SubscriptionRef.updateAndGet(state, (s) => ({ ...s, urgent: false }))
      if (Option.isSome(settled.failure)) return yield* Effect.fail(settled.failure.value)
      if (!isSettled(settled.layout.slots)) {
        return yield* Effect.fail(new DeliveryError({ reason: "failed", detail: "Discord delivery stopped unexpectedly" }))
      }
    })

    const commit = (all: boolean) =>
      SubscriptionRef.update(state, (s) => {
        const cut = all ? s.pending.length : commitPoint(s.pending)
        if (cut === 0) return s
        const shown = s.pending.slice(0, cut)
        return {
          ...s,
          pending: s.pending.slice(cut),
          delivered: s.delivered + shown,
          layout: layoutText(s.layout, s.layout.passText + shown)
        }
      })

    /** The partial reply stays; its last message gets the stopped marker (once). */
    const markStopped = Effect.zipRight(
      Effect.zipRight(commit(true), SubscriptionRef.update(state, (s) => ({ ...s, layout: appendToLastText(s.layout, STOPPED_MARKER) }))),
      poke
    )

    const sink: Context.Tag.Service<ResponseSink> = {
      write: (delta) =>
        Effect.gen(function*() {
          yield* failIfFailed
          if (delta.length === 0) return
          yield* SubscriptionRef.update(state, (s) => ({ ...s, pending: s.pending + delta }))
          yield* commit(false)
          yield* poke
        }),
      endPass: (mode) =>
        Effect.gen(function*() {
          if (mode === "flush") {
            yield* commit(true)
          } else {
            yield* SubscriptionRef.update(state, (s) => ({ ...s, pending: "" }))
          }
          yield* drain
          return yield* SubscriptionRef.modify(state, (s) => [s.layout.passText, { ...s, layout: newPass(s.layout) }])
        }),
      delivered: Effect.map(SubscriptionRef.get(state), (s) => s.delivered),
      notice: (notice) =>
        notice._tag === "Stopped"
          ? markStopped
          : Effect.zipRight(SubscriptionRef.update(state, (s) => ({ ...s, layout: addEmbed(s.layout, noticeEmbed(notice)) })), poke)
    }

    return {
      sink,
      drain,
      markStopped: Effect.zipRight(markStopped, drain),
      lastWriteAt: Effect.map(SubscriptionRef.get(state), (s) => s.lastWriteAt),
      messageIds: Effect.map(SubscriptionRef.get(state), (s) =>
        s.layout.slots.flatMap((slot) => (slot.messageId === undefined ? [] : [slot.messageId])))
    }
  })
