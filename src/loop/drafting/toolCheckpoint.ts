import { Effect, Option, Ref } from "effect"
import type { ToolArgs } from "../../domain/FunctionCall"
import type { ToolResult } from "../../domain/ToolResult"
import { Checkpoint } from "../CallCheckpoint"
import { CurrentTurn } from "../CurrentTurn"
import { ThoughtLog } from "../ThoughtLog"
import { askReviewer } from "./askReviewer"
import {
  type DraftAttempt,
  DraftReview,
  MAX_TOOL_CORRECTIONS,
  MAX_TOOL_REVIEWS,
  pendingText,
  recordReviewUsage,
  remember,
  type ReviewRejection
} from "./DraftState"
import { toolReviewRequest } from "./reviewRequests"


/** JSON with object keys sorted at every depth: equal arguments give equal text whatever their order. */
const stableJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableJson(item)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * `prepareToolRequest`'s normalisation: the canonical tool name (aliases resolved) and the
 * arguments with blank-trimmed strings and sorted keys, so a request that only differs in
 * spelling is the same request.
 */
const requestKey = (canonicalName: string, args: ToolArgs): string => {
  const trimmed = (value: unknown): unknown =>
    typeof value === "string"
      ? value.trim()
      : Array.isArray(value)
      ? value.map(trimmed)
      : typeof value === "object" && value !== null
      ? Object.fromEntries(Object.entries(value).map(([key, item]) => [key, trimmed(item)]))
      : value
  return `${canonicalName}\u0000${stableJson(trimmed(args))}`
}

const rejection = (findings: string, correctionAllowed: boolean): ReviewRejection => ({
  status: "review_rejected",
  findings,
  actionExecuted: false,
  correctionAllowed,
  reason: "A reviewer refused this tool request before it ran, so nothing was executed. " +
    (correctionAllowed
      ? "Read the findings and, if the action is still needed, issue one corrected request."
      : "Do not request it again this turn; answer without it.")
})

/**
 * The review checkpoint of a tool call (drafting on only; docs/architecture.md, "The order of a
 * tool call"): before dispatch, an identical request that already succeeded is reused, an
 * identical one that was refused is refused again without asking, and anything new goes to the
 * reviewer (8 reviews a turn; 2 of its refusals may invite a correction). A reviewer that hangs,
 * fails or answers garbage lets the request run, with a hidden notice.
 */
export const toolCheckpoint = (input: {
  readonly name: string
  readonly canonicalName: string
  readonly description: string | undefined
  readonly args: ToolArgs
  /** Text the author wrote in this pass before the call (held, not shown). */
  readonly narration: string
}) =>
  Effect.gen(function*() {
    const found = yield* Effect.serviceOption(DraftReview)
    if (Option.isNone(found)) return Checkpoint.Dispatch({ key: undefined })
    const draft = found.value
    const turn = yield* CurrentTurn
    const thoughtLog = yield* ThoughtLog
    const key = requestKey(input.canonicalName, input.args)
    const state = yield* Ref.get(draft.turn.state)

    const earlierRejection = state.rejected.get(key)
    if (earlierRejection !== undefined) {
      yield* Effect.logInfo(`Tool request '${input.name}' was refused by the reviewer before: refused again, not run`)
      return Checkpoint.Rejected({ rejection: earlierRejection })
    }
    const earlierSuccess = state.succeeded.get(key)
    if (earlierSuccess !== undefined) {
      yield* Effect.logInfo(`Tool request '${input.name}' already succeeded this turn: its result is reused, not run again`)
      return Checkpoint.Reused({ remembered: earlierSuccess })
    }

    const notice = (kind: "draft_review" | "draft_unreviewed", severity: "info" | "error", title: string, description: string) =>
      thoughtLog.post({ kind, severity, title, description, channelId: turn.channelId, guildId: turn.guildId })

    if (state.toolReviews >= MAX_TOOL_REVIEWS) {
      if (!state.toolBudgetNoticeSent) {
        yield* Ref.update(draft.turn.state, (s) => ({ ...s, toolBudgetNoticeSent: true }))
        yield* notice("draft_unreviewed", "info", `Tool requests unreviewed: ${input.name}`, `The turn's ${MAX_TOOL_REVIEWS} tool reviews are spent; further requests run unreviewed.`)
      }
      return Checkpoint.Dispatch({ key })
    }
    yield* Ref.update(draft.turn.state, (s) => ({ ...s, toolReviews: s.toolReviews + 1 }))

    const answer = yield* askReviewer(draft.reviewer.language, toolReviewRequest(draft.reviewer, {
      messages: yield* Ref.get(turn.state.contextItems),
      narration: [pendingText(state), input.narration].filter((text) => text.trim().length > 0).join("\n\n"),
      name: input.name,
      description: input.description,
      args: input.args
    }))
    if (answer._tag === "Killed") return Checkpoint.Stopped()
    yield* recordReviewUsage(draft, answer.usage)
    if (answer._tag === "Unanswered") {
      yield* notice("draft_unreviewed", "error", `Tool request unreviewed: ${input.name}`, `The reviewer (${draft.reviewer.model}) gave no verdict (${answer.why}: ${answer.detail}); the request runs unreviewed.`)
      return Checkpoint.Dispatch({ key })
    }
    if (answer.verdict.verdict === "approve") return Checkpoint.Dispatch({ key })

    // `revise` invites a correction while the turn has corrections left; `cancel` never does.
    const correctionAllowed = yield* Ref.modify(draft.turn.state, (s) => {
      const allowed = answer.verdict.verdict === "revise" && s.toolCorrections < MAX_TOOL_CORRECTIONS
      return [allowed, allowed ? { ...s, toolCorrections: s.toolCorrections + 1 } : s]
    })
    const refused = rejection(answer.verdict.feedback || "The reviewer refused the request without findings.", correctionAllowed)
    yield* Ref.update(draft.turn.state, (s) => ({ ...s, rejected: remember(s.rejected, key, refused) }))
    yield* notice("draft_review", "info", `Tool request refused by the reviewer: ${input.name}`, `${refused.findings} (correction ${correctionAllowed ? "allowed" : "not allowed"})`)
    return Checkpoint.Rejected({ rejection: refused })
  })

/** After a dispatch the checkpoint let through: a success is remembered for reuse. */
export const rememberOutcome = (key: string | undefined, result: ToolResult, payload: unknown): Effect.Effect<void> =>
  key === undefined || result.success !== true
    ? Effect.void
    : Effect.flatMap(Effect.serviceOption(DraftReview), (found) =>
      Option.match(found, {
        onNone: () => Effect.void,
        onSome: (draft: DraftAttempt) =>
          Ref.update(draft.turn.state, (s) => ({
            ...s,
            succeeded: remember(s.succeeded, key, {
              payload,
              endTurn: result.endTurn === true,
              ...(result.imageMetadata === undefined ? {} : { imageMetadata: result.imageMetadata })
            })
          }))
      }))
