import type { Data } from "effect"
import type { PassResult } from "../domain/PassResult"
import type { GenerationRequest } from "../provider/GenerationRequest"
import type { PassCallsFold } from "./foldPassCalls"

/**
 * The rules that end (or retry) a pass of the tool loop, each a small named predicate. Pure: the
 * loop feeds them facts and acts on the answer (docs/architecture.md, "Loop core and its hooks").
 */

type EmptyPass = Data.TaggedEnum.Value<PassResult, "EmptyResponse">

const isBlank = (text: string) => text.trim().length === 0

/**
 * For every provider: calls that all succeeded and all are silent writes, after non-blank
 * pre-tool text, end the turn with that text (there is nothing to follow up).
 */
export const endsAfterPreToolText = (fold: PassCallsFold, passText: string): boolean =>
  !isBlank(passText) && fold.allSucceeded && fold.allEndTurnAfterText

/** The consecutive-error cap, on the count after the whole batch (checked before endTurn). */
export const errorCapReached = (fold: PassCallsFold, max: number): boolean =>
  fold.countedFailure && fold.consecutiveToolErrors >= max

/** A call asked to end the turn: it takes effect once every call of the pass has ended. */
export const endTurnRequested = (fold: PassCallsFold): boolean => fold.endTurn

/** A call enriched the context: the next pass sees it, whatever the other calls said. */
export const contextRestarted = (fold: PassCallsFold): boolean => fold.restarted

/**
 * Whether an empty follow-up pass may settle on the text already shown. A cut (`length`),
 * discarded, or held-back (`naiContinuationPrefill`) answer never settles; otherwise the last
 * tool decides (`!requiresFollowUp(lastToolName)`).
 */
export const mayTrySettle = (pass: EmptyPass, lastToolName: string | undefined): lastToolName is string =>
  lastToolName !== undefined && pass.finishReason !== "length" && pass.emptyResponseReason === undefined &&
  pass.naiContinuationPrefill === undefined

/** A replacement attempt that had nothing to add: the reply it continued is complete. */
export const fallbackReplyComplete = (pass: EmptyPass, carriedFromFallback: boolean): boolean =>
  carriedFromFallback && pass.finishReason !== "length" && pass.emptyResponseReason === undefined

/**
 * A server that refuses a trailing assistant message (llama.cpp in thinking mode answers HTTP
 * 400; others refuse any prefill) fails the pass before it shows anything: that is the shape,
 * not the conversation, so the pass is retried once with an instruction instead.
 */
export const refusedPrefill = (pass: PassResult, request: GenerationRequest): boolean =>
  pass._tag === "Error" && pass.error.reason === "BadRequest" && request.assistantPrefill !== undefined && isBlank(pass.accumulatedText)
