import { Context, Effect, type Redacted, Ref } from "effect"
import type { LanguageModel } from "../../provider/LanguageModel"
import type { ImageMetadata } from "../../domain/ImageMetadata"
import { addUsage, type TokenUsage } from "../../domain/TokenUsage"

/** Per-turn review budgets, shared by every attempt of the turn. */
export const MAX_RESPONSE_REVIEWS = 2
export const MAX_AUTHOR_REVISIONS = 1
export const MAX_TOOL_REVIEWS = 8
export const MAX_TOOL_CORRECTIONS = 2

/**
 * The held-prose ceiling of a turn: ten Discord messages. Model output beyond it is dropped
 * (and the reviewer told the draft was cut), so a runaway pass cannot grow the draft forever.
 */
export const HELD_PROSE_MAX_CHARS = 20_000

/** Remembered tool requests per turn (each kind); the oldest is forgotten beyond this. */
const REMEMBERED_REQUESTS_MAX = 200

/** What the next author pass is told after a reviewer asked for a revision. */
export interface RevisionNote {
  readonly feedback: string
  readonly draft: string
}

/** A request that ran successfully this turn: an identical one is answered with this, not re-run. */
interface RememberedSuccess {
  readonly payload: unknown
  readonly endTurn: boolean
  readonly imageMetadata?: ImageMetadata
}

/** What the author sees, in place of a result, for a tool request the reviewer refused (nothing ran). */
export interface ReviewRejection {
  readonly status: "review_rejected"
  readonly findings: string
  readonly actionExecuted: false
  readonly correctionAllowed: boolean
  readonly reason: string
}

/** Review state of one turn: the pending reply, the budgets used, remembered requests. */
export interface DraftState {
  /** Held prose, one part per pass that wrote any, in order: what approval delivers. */
  readonly parts: ReadonlyArray<string>
  /** Text of the pass being streamed, not yet a part. */
  readonly passText: string
  /** Characters held this turn (parts and the current pass), against the ceiling. */
  readonly heldChars: number
  /** Some output was dropped at the ceiling. */
  readonly cut: boolean
  readonly responseReviews: number
  readonly revisions: number
  readonly toolReviews: number
  readonly toolCorrections: number
  /** Set by a `revise` verdict; the author passes after it are told (cleared on the next review). */
  readonly revision: RevisionNote | undefined
  readonly succeeded: ReadonlyMap<string, RememberedSuccess>
  readonly rejected: ReadonlyMap<string, ReviewRejection>
  /** The tool-review budget ran out and the operator was told (once a turn). */
  readonly toolBudgetNoticeSent: boolean
}

const initialDraftState: DraftState = {
  parts: [],
  passText: "",
  heldChars: 0,
  cut: false,
  responseReviews: 0,
  revisions: 0,
  toolReviews: 0,
  toolCorrections: 0,
  revision: undefined,
  succeeded: new Map(),
  rejected: new Map(),
  toolBudgetNoticeSent: false
}

/** The review state of one turn, made once by the outer tier and handed to each attempt. */
export interface DraftTurn {
  readonly state: Ref.Ref<DraftState>
}

export const makeDraftTurn: Effect.Effect<DraftTurn> = Effect.map(Ref.make(initialDraftState), (state) => ({ state }))

/**
 * Response Drafting for one attempt: the turn's shared state, the reviewer to ask (through the
 * same LanguageModel) and what this attempt's reviews used. Provided by runToolLoop while
 * drafting is on; executeToolCall's checkpoint finds it with `serviceOption`.
 */
export interface DraftAttempt {
  readonly turn: DraftTurn
  readonly reviewer: {
    readonly model: string
    readonly apiKey: Redacted.Redacted<string> | undefined
    /** The turn's LanguageModel, carried so executeToolCall needs no model of its own. */
    readonly language: LanguageModel["Service"]
  }
  /** Reviewer tokens of this attempt, added to the attempt's usage. */
  readonly usage: Ref.Ref<TokenUsage | undefined>
}

export class DraftReview extends Context.Service<DraftReview, DraftAttempt>()("loopcord/loop/drafting/DraftReview") {}

export const recordReviewUsage = (draft: DraftAttempt, usage: TokenUsage | undefined): Effect.Effect<void> =>
  Ref.update(draft.usage, (total) => addUsage(total, usage))

/** Adds one entry, forgetting the oldest beyond the bound. */
export const remember = <V>(map: ReadonlyMap<string, V>, key: string, value: V): ReadonlyMap<string, V> => {
  const next = new Map(map)
  next.delete(key)
  next.set(key, value)
  while (next.size > REMEMBERED_REQUESTS_MAX) {
    const oldest = next.keys().next()
    if (oldest.done === true) break
    next.delete(oldest.value)
  }
  return next
}

const isBlank = (text: string) => text.trim().length === 0

/** The pending reply as one text (parts are separate messages when delivered). */
export const pendingText = (state: DraftState): string => state.parts.filter((part) => !isBlank(part)).join("\n\n")
