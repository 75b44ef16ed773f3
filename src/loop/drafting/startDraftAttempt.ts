import { Effect, type Redacted, Ref } from "effect"
import { DraftingConfig } from "../../config/DraftingConfig"
import type { TokenUsage } from "../../domain/TokenUsage"
import { LanguageModel } from "../../provider/LanguageModel"
import type { AttemptInfo } from "../AttemptInfo"
import { CurrentTurn } from "../CurrentTurn"
import { type DraftAttempt, type DraftTurn, makeDraftTurn } from "./DraftState"

/**
 * Response Drafting for one attempt, or undefined when it is off. `turn` is the review state
 * the outer tier shares between attempts (a loop run on its own makes one). A stop response is
 * never drafted: it is one pass that only acknowledges the /kill (docs/architecture.md, "The stop
 * response"), and a review could ask for a second.
 */
export const startDraftAttempt = (input: {
  readonly turn: DraftTurn | undefined
  readonly attempt: AttemptInfo
  readonly apiKey: Redacted.Redacted<string> | undefined
}): Effect.Effect<DraftAttempt | undefined, never, CurrentTurn | LanguageModel> =>
  Effect.gen(function*() {
    const settings = yield* DraftingConfig
    if (!settings.enabled || (yield* CurrentTurn).isStopResponse) return undefined
    return {
      turn: input.turn ?? (yield* makeDraftTurn),
      // Through the same LanguageModel, with the attempt's key; without RESPONSE_REVIEW_MODEL the attempt's own model reviews.
      reviewer: { model: settings.reviewModel ?? input.attempt.model, apiKey: input.apiKey, language: yield* LanguageModel },
      usage: yield* Ref.make<TokenUsage | undefined>(undefined)
    }
  })
