import { Effect, Ref } from "effect"
import { CallCheckpoint } from "../CallCheckpoint"
import { Conclusion, type LoopHooksFactory, noHooks } from "../LoopHooks"
import { ResponseSink } from "../ResponseSink"
import { authorNotes } from "./authorNotes"
import { completeResponse } from "./completeResponse"
import { DraftReview, type DraftTurn } from "./DraftState"
import { discardPending, dropProse, holdingSink, keepProse } from "./holdingSink"
import { startDraftAttempt } from "./startDraftAttempt"
import { rememberOutcome, toolCheckpoint } from "./toolCheckpoint"

/**
 * Response Drafting as loop hooks (docs/architecture.md, "Loop core and its hooks"): passes write
 * into a held draft, the author notes join every request, the tool checkpoint finds the reviewer
 * while calls run, and the pending reply is reviewed and delivered where the turn concludes.
 * `turn` is the review state the turn's attempts share (a loop run on its own makes one). Off,
 * or in a stop response: no hooks.
 */
export const draftingHooks = (turn?: DraftTurn): LoopHooksFactory => (attempt, apiKey) =>
  Effect.map(startDraftAttempt({ turn, attempt, apiKey }), (draft) =>
    draft === undefined ? noHooks : {
      holdsOutput: true,
      requestNotes: authorNotes(draft.turn),
      passSink: (sink) => holdingSink(draft.turn, sink),
      // The tool checkpoint: each request is reviewed before it runs.
      aroundCalls: (calls) =>
        calls.pipe(
          Effect.provideService(CallCheckpoint, { before: toolCheckpoint, after: rememberOutcome }),
          Effect.provideService(DraftReview, draft)
        ),
      passEnded: (text, fate) =>
        fate === "kept" ? keepProse(draft.turn, text) : fate === "dropped" ? dropProse(draft.turn, text) : discardPending(draft.turn),
      conclude: (input) =>
        Effect.gen(function*() {
          const completion = yield* completeResponse({ draft, ...input, sink: yield* ResponseSink })
          return completion._tag === "Finished"
            ? Conclusion.Finished({ status: completion.status, text: completion.text, deliveryFailed: completion.deliveryFailed })
            : Conclusion.Revise()
        }),
      usage: Ref.get(draft.usage)
    })
