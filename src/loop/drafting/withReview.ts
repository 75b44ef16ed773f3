import type { DeliveryError } from "../../domain/DeliveryError"
import { addUsage, type TokenUsage } from "../../domain/TokenUsage"
import { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { AttemptResult } from "../../domain/TurnResult"

/**
 * An attempt's result under Response Drafting: the reviewer's tokens count toward the attempt,
 * and an approved reply the destination refused makes the `error` turn `delivery_failed` (a reply
 * that never reached the channel is never reported as an answer). Unchanged when nothing was
 * reviewed or refused.
 */
export const withReview = (result: AttemptResult, reviewUsage: TokenUsage | undefined, refused: DeliveryError | undefined): AttemptResult => ({
  ...result,
  usage: addUsage(result.usage, reviewUsage),
  ...(refused === undefined ? {} : { reason: "delivery_failed" as const })
})

/** A history entry without its narration: after a revision, that held text was never shown. */
export const withoutPreToolText = (entry: ToolHistoryEntry): ToolHistoryEntry => {
  if (entry.preToolCallTextParts === undefined) return entry
  const { preToolCallTextParts: _dropped, ...rest } = entry
  return ToolHistoryEntry(rest)
}
