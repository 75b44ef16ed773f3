import { Data, Effect, Option, Ref, Result } from "effect"
import type { DeliveryError } from "../../domain/DeliveryError"
import type { TurnStatus } from "../../domain/PassResult"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import { CurrentTurn } from "../CurrentTurn"
import type { ResponseSink } from "../ResponseSink"
import { ThoughtLog } from "../ThoughtLog"
import { TurnSignals } from "../TurnSignals"
import { askReviewer } from "./askReviewer"
import { type DraftAttempt, MAX_AUTHOR_REVISIONS, MAX_RESPONSE_REVIEWS, pendingText, recordReviewUsage } from "./DraftState"
import { discardPending } from "./holdingSink"
import { responseReviewRequest } from "./reviewRequests"

/** What completing a pending response decided. */
type Completion = Data.TaggedEnum<{
  /** The reviewer asked for a revision: the pending reply is cleared, the loop goes on. */
  Revise: {}
  /** The turn ends with this status and text (`deliveryFailed`: the destination refused it). */
  Finished: { readonly status: TurnStatus; readonly text: string; readonly deliveryFailed: DeliveryError | undefined }
}>

const Completion = Data.taggedEnum<Completion>()

interface CompleteResponseInput {
  readonly draft: DraftAttempt
  /** The status and text the turn ends with when nothing is pending (a tool-only turn). */
  readonly status: TurnStatus
  readonly responseText: string
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  /** The real sink: approved text is delivered here. */
  readonly sink: ResponseSink["Service"]
  /**
   * The loop's stop handling: a stop that carries a context gets its stop response queued; any
   * other stop is cleared, so it cannot end the channel's next turn before it starts.
   */
  readonly queueStopResponse: Effect.Effect<void>
}

const isBlank = (text: string) => text.trim().length === 0

/** The review ended early because a follow-up arrived. */
const SUPERSEDED = { _tag: "Superseded" } as const

/**
 * `completeResponse` (docs/architecture.md, "Response Drafting"), run where the loop would end
 * with an answer (completed, endTurn, the STM end, a settled empty pass). With nothing pending
 * it is the normal result.
 * Otherwise the reviewer decides, unless a follow-up arrives first: that discards the reply at
 * once (`follow_up_interrupt`, the review interrupted). Cancel discards the reply
 * (`follow_up_interrupt` when a follow-up waits, else `stopped_by_user`); revise, with a
 * revision left, clears it and lets the loop go on; anything else delivers it part by part. A
 * reviewer that hangs, fails, answers garbage or has no budget left never costs the reply: it is
 * delivered unreviewed, and the operator is told.
 */
export const completeResponse = (input: CompleteResponseInput) =>
  Effect.gen(function*() {
    const { draft, sink } = input
    const turn = yield* CurrentTurn
    const signals = yield* TurnSignals
    const thoughtLog = yield* ThoughtLog
    const state = yield* Ref.get(draft.turn.state)
    const candidate = pendingText(state)
    // A tool-only turn: nothing to review, and no prose is invented.
    if (isBlank(candidate)) return Completion.Finished({ status: input.status, text: input.responseText, deliveryFailed: undefined })

    const notice = (kind: "draft_review" | "draft_unreviewed", severity: "info" | "error", title: string, description: string) =>
      thoughtLog.post({ kind, severity, title, description, channelId: turn.channelId, guildId: turn.guildId })

    /** Approval (or no verdict): each pending part in order; the first part that does not deliver decides the status. */
    const deliver = Effect.gen(function*() {
      const { parts } = yield* Ref.get(draft.turn.state)
      yield* discardPending(draft.turn)
      yield* Ref.update(draft.turn.state, (s) => ({ ...s, revision: undefined }))
      const delivered: Array<string> = []
      for (const part of parts) {
        // A /kill between parts stops the rest, as it would stop a stream (what was shown stays).
        const pending = yield* signals.current
        if (Option.isSome(pending) && pending.value._tag === "Stop") {
          yield* input.queueStopResponse
          return Completion.Finished({ status: "stopped_by_user", text: delivered.join("\n\n"), deliveryFailed: undefined })
        }
        const sent = yield* Effect.result(Effect.andThen(sink.write(part), sink.endPass("flush")))
        if (Result.isFailure(sent)) {
          const error = sent.failure
          yield* Effect.logError(`approved reply delivery failed for good (${error.reason}): ${error.detail}`)
          yield* thoughtLog.post({
            kind: "delivery_failed",
            severity: "error",
            title: "Reply not delivered",
            description: `The destination refused the approved reply (${error.reason}); the turn ended as delivery_failed. ${error.detail}`,
            channelId: turn.channelId,
            guildId: turn.guildId
          })
          return Completion.Finished({ status: "error", text: delivered.join("\n\n"), deliveryFailed: error })
        }
        if (!isBlank(sent.success)) delivered.push(sent.success)
      }
      const text = delivered.join("\n\n")
      return Completion.Finished({ status: isBlank(text) ? "empty_response" : "completed", text, deliveryFailed: undefined })
    })

    if (state.responseReviews >= MAX_RESPONSE_REVIEWS) {
      yield* notice("draft_unreviewed", "info", "Reply delivered unreviewed", `The turn's ${MAX_RESPONSE_REVIEWS} response reviews are spent.`)
      return yield* deliver
    }
    yield* Ref.update(draft.turn.state, (s) => ({ ...s, responseReviews: s.responseReviews + 1 }))

    const review = askReviewer(draft.reviewer.language, responseReviewRequest(draft.reviewer, {
      instructions: turn.persona.systemPrompt,
      messages: yield* Ref.get(turn.state.contextItems),
      functionHistory: input.functionHistory,
      draft: candidate,
      cut: state.cut
    }))
    // A newer message supersedes the pending reply, as it supersedes a reply still streaming: one
    // arriving while the reviewer decides ends the review at once (the race interrupts the review,
    // which closes the reviewer's request) and nothing of the draft is shown. Stops are not raced
    // here: /kill already ends askReviewer, each verdict below honours a registered stop, and once
    // a stop is registered no follow-up can be (so a stop heard first leaves this side waiting).
    const followUp = Effect.flatMap(signals.awaitRequest, (request) => request._tag === "FollowUp" ? Effect.succeed(SUPERSEDED) : Effect.never)
    const answer = yield* Effect.race(review, followUp)
    if (answer._tag === "Superseded") {
      yield* discardPending(draft.turn)
      yield* Effect.logInfo("a follow-up arrived while the reviewer decided: the pending reply is discarded")
      return Completion.Finished({ status: "follow_up_interrupt", text: "", deliveryFailed: undefined })
    }
    if (answer._tag === "Killed") {
      yield* discardPending(draft.turn)
      yield* input.queueStopResponse
      return Completion.Finished({ status: "stopped_by_user", text: "", deliveryFailed: undefined })
    }
    yield* recordReviewUsage(draft, answer.usage)
    if (answer._tag === "Unanswered") {
      yield* Effect.logWarning(`the reviewer gave no verdict (${answer.why}): the reply is delivered unreviewed`).pipe(
        Effect.annotateLogs({ reviewModel: draft.reviewer.model, detail: answer.detail })
      )
      yield* notice("draft_unreviewed", "error", "Reply delivered unreviewed", `The reviewer (${draft.reviewer.model}) gave no verdict (${answer.why}: ${answer.detail}).`)
      return yield* deliver
    }

    const { feedback, verdict } = answer.verdict
    switch (verdict) {
      case "cancel": {
        yield* discardPending(draft.turn)
        yield* notice("draft_review", "info", "Reply cancelled by the reviewer", feedback || "No reason given.")
        const pending = yield* signals.current
        if (Option.isSome(pending) && pending.value._tag === "FollowUp") {
          return Completion.Finished({ status: "follow_up_interrupt", text: "", deliveryFailed: undefined })
        }
        yield* input.queueStopResponse
        return Completion.Finished({ status: "stopped_by_user", text: "", deliveryFailed: undefined })
      }
      case "revise": {
        if (state.revisions >= MAX_AUTHOR_REVISIONS) {
          yield* notice("draft_review", "info", "Revision requested, none left: reply delivered as drafted", feedback)
          return yield* deliver
        }
        yield* discardPending(draft.turn)
        yield* Ref.update(draft.turn.state, (s) => ({ ...s, revisions: s.revisions + 1, revision: { feedback, draft: candidate } }))
        yield* notice("draft_review", "info", "Revision requested by the reviewer", feedback)
        return Completion.Revise()
      }
      case "approve":
        return yield* deliver
    }
  })
