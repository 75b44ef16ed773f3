import { Data, Effect, type Redacted } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"
import type { DeliveryError } from "../domain/DeliveryError"
import type { TurnStatus } from "../domain/PassResult"
import type { TokenUsage } from "../domain/TokenUsage"
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { LanguageModel } from "../provider/LanguageModel"
import type { LoopConfig } from "../config/LoopConfig"
import type { AttemptInfo } from "./AttemptInfo"
import type { CurrentTurn } from "./CurrentTurn"
import type { ResponseSink } from "./ResponseSink"
import type { ThoughtLog } from "./ThoughtLog"
import type { TurnSignals } from "./TurnSignals"

/** What becomes of the text a pass wrote: it joins the reply, it is dropped (the pass failed), or thrown away (a stop or follow-up). */
export type PassFate = "kept" | "dropped" | "discarded"

/** What a hook decided where the turn would conclude with an answer. */
export type Conclusion = Data.TaggedEnum<{
  /** The turn ends with this status and text (`deliveryFailed`: the destination refused it). */
  Finished: { readonly status: TurnStatus; readonly text: string; readonly deliveryFailed: DeliveryError | undefined }
  /** The answer is to be written again: nothing of it was shown, the loop goes on. */
  Revise: {}
}>

export const Conclusion = Data.taggedEnum<Conclusion>()

interface ConcludeInput {
  readonly status: TurnStatus
  readonly responseText: string
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  /** The loop's stop handling: queue the stop response, or clear the stop. */
  readonly queueStopResponse: Effect.Effect<void>
}

type HookServices = CurrentTurn | TurnSignals | ThoughtLog | ResponseSink | LanguageModel | LoopConfig

/**
 * What a feature adds to one attempt's pass loop without the loop naming it
 * (docs/architecture.md, "Loop core and its hooks").
 */
export interface LoopHooks {
  /** Pass text is held rather than shown: a pass that failed or stopped showed nothing. */
  readonly holdsOutput: boolean
  /** Messages added after the turn's context on every request. */
  readonly requestNotes: Effect.Effect<ReadonlyArray<ChatMessage>>
  /** The sink each pass writes to. */
  readonly passSink: (sink: ResponseSink["Service"]) => ResponseSink["Service"]
  /** Wraps the run of a pass's calls (the tool checkpoint finds its services here). */
  readonly aroundCalls: <A, E, R>(calls: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** What a pass wrote, once the loop knows what becomes of it. */
  readonly passEnded: (text: string, fate: PassFate) => Effect.Effect<void>
  /** Where the turn would conclude with an answer. */
  readonly conclude: (input: ConcludeInput) => Effect.Effect<Conclusion, never, HookServices>
  /** Tokens the hook spent for this attempt (they count toward it). */
  readonly usage: Effect.Effect<TokenUsage | undefined>
}

/** The hooks of one attempt, made when it starts (with its model and key). */
export type LoopHooksFactory = (
  attempt: AttemptInfo,
  apiKey: Redacted.Redacted<string> | undefined
) => Effect.Effect<LoopHooks, never, CurrentTurn | LanguageModel>

/** No feature: pass text is shown as it comes, and the turn concludes as the loop says. */
export const noHooks: LoopHooks = {
  holdsOutput: false,
  requestNotes: Effect.succeed([]),
  passSink: (sink) => sink,
  aroundCalls: (calls) => calls,
  passEnded: () => Effect.void,
  conclude: (input) => Effect.succeed(Conclusion.Finished({ status: input.status, text: input.responseText, deliveryFailed: undefined })),
  usage: Effect.succeed(undefined)
}
