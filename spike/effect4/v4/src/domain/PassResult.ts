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

/** Why delivery stopped early. */
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
  readonly detailsContent?: string
  readonly naiContinuationPrefill?: string
}

/** How one provider pass ended. Exactly one per pass. */
export type PassResult = Data.TaggedEnum<{
  Completed: PassCommon
  FunctionCall: PassCommon & { readonly call: FunctionCall | undefined }
  Error: PassCommon & { readonly error: ProviderError }
  DeliveryFailed: PassCommon & { readonly error: DeliveryError }
  Timeout: PassCommon & { readonly phase: "first_token" | "idle"; readonly sawProgress: boolean }
  StoppedByUser: PassCommon
  EmptyResponse: PassCommon & { readonly finishReason?: FinishReason; readonly emptyResponseReason?: string }
  FollowUpInterrupt: PassCommon
}>

export const PassResult = Data.taggedEnum<PassResult>()

/** Every status a pass or a whole turn can end with. */
export type TurnStatus =
  | "completed"
  | "function_call"
  | "error"
  | "timeout"
  | "stopped_by_user"
  | "empty_response"
  | "follow_up_interrupt"
  | "skipped"
