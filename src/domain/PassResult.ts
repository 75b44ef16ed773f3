import { Data } from "effect"
import type { DeliveryError } from "./DeliveryError"
import type { FunctionCall } from "./FunctionCall"
import type { FinishReason } from "./ProviderEvent"
import type { ProviderError } from "./ProviderError"
import type { TokenUsage } from "./TokenUsage"

/** Reasoning captured outside the visible text of a pass. */
export interface ThoughtLogPayload {
  readonly summary?: string
  readonly raw?: string
}

/** Why delivery stopped early; `channel_deleted` / `missing_access` make the destination unreachable. */
export type StopReason =
  | "user_request"
  | "system_request"
  | "send_message_limit"
  | "flush_limit"
  | "channel_deleted"
  | "missing_access"
  | "unknown"

/** Fields every pass carries. `accumulatedText` is what the sink actually delivered in this pass. */
interface PassCommon {
  readonly accumulatedText: string
  readonly usage?: TokenUsage
  readonly thoughtLog?: ThoughtLogPayload
  readonly stopReason?: StopReason
  /** NovelAI scene metadata of this pass (`<details>` bodies, joined by a blank line); never shown. */
  readonly detailsContent?: string
  /** NovelAI: the trailing fragment held back at the output budget (docs/architecture.md, NovelAI's pass rules); never shown. */
  readonly naiContinuationPrefill?: string
}

/** How one provider pass ended. Exactly one per pass. */
export type PassResult = Data.TaggedEnum<{
  Completed: PassCommon
  /**
   * Every call the pass made, in the model's order (at least one; a call without a usable name
   * is malformed and refused). See docs/architecture.md, "Tool calls of one pass".
   */
  FunctionCall: PassCommon & { readonly calls: ReadonlyArray<FunctionCall> }
  Error: PassCommon & { readonly error: ProviderError }
  /** The destination refused the reply for good: the turn ends `error`, `delivery_failed`. */
  DeliveryFailed: PassCommon & { readonly error: DeliveryError }
  Timeout: PassCommon & { readonly phase: "first_token" | "idle"; readonly sawProgress: boolean }
  StoppedByUser: PassCommon
  EmptyResponse: PassCommon & { readonly finishReason?: FinishReason; readonly emptyResponseReason?: string }
  FollowUpInterrupt: PassCommon
}>

export const PassResult = Data.taggedEnum<PassResult>()

/** Every status a pass or a whole turn can end with; `skipped` only for a turn (defensive). */
export type TurnStatus =
  | "completed"
  | "function_call"
  | "error"
  | "timeout"
  | "stopped_by_user"
  | "empty_response"
  | "follow_up_interrupt"
  | "skipped"
