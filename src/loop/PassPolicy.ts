import { Data, Effect } from "effect"
import type { ResponseSink } from "./ResponseSink"
import type { CurrentTurn } from "./CurrentTurn"
import type { PassCallsFold } from "./foldPassCalls"
import type { TurnFlags } from "../tools/TurnState"
import type { ToolRegistry } from "../tools/ToolRegistry"

/** What the loop knows about a pass whose calls were just folded. */
interface PassFacts {
  /** The pass's own text before its calls, posted or withheld. */
  readonly preToolText: string
  /** Everything the user saw since the last history entry, this pass included. */
  readonly passText: string
  /** Latest non-blank text the user saw. */
  readonly lastDelivered: string | undefined
  readonly fold: PassCallsFold
  readonly provider: string
}

/**
 * A pass policy's answer: `Continue` leaves the pass to the loop's generic rules; `Retry` runs
 * the next pass at once; `Conclude` ends the turn with `text` as its answer.
 */
export type PassVerdict = Data.TaggedEnum<{
  Continue: {}
  Retry: {}
  Conclude: { readonly text: string }
}>

export const PassVerdict = Data.taggedEnum<PassVerdict>()

type PassPolicyServices = ToolRegistry | CurrentTurn | ResponseSink

/**
 * Rules a provider family adds to the pass loop (docs/architecture.md, "Loop core and its
 * hooks"). The loop asks them after the generic rules that end a turn on a batch (error cap,
 * endTurn, context restart) and before the generic end after pre-tool text.
 */
export interface PassPolicy {
  /** The next pass posts nothing: what it writes is withheld (it repeats what was posted). */
  readonly withholdsText: (flags: TurnFlags) => boolean
  /** Failed calls of a pass with this text count toward `failuresAfterText`. */
  readonly countsFailuresAfterText: (preToolText: string) => boolean
  readonly afterCalls: (facts: PassFacts) => Effect.Effect<PassVerdict, never, PassPolicyServices>
}

/** Every provider without rules of its own. */
export const defaultPassPolicy: PassPolicy = {
  withholdsText: () => false,
  countsFailuresAfterText: () => false,
  afterCalls: () => Effect.succeed(PassVerdict.Continue())
}
