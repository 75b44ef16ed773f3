import { Data } from "effect"
import type { FunctionCall } from "./FunctionCall"
import type { TokenUsage } from "./TokenUsage"

/** Why the provider stopped generating. `length`/`content_filter` mean output was cut. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other"

/** One normalized event of a provider stream; keep-alives prove the connection is alive but are not content. */
export type ProviderEvent = Data.TaggedEnum<{
  TextDelta: { readonly text: string }
  ReasoningDelta: { readonly text: string }
  ToolCall: { readonly call: FunctionCall }
  Usage: { readonly usage: TokenUsage }
  Finish: { readonly reason: FinishReason }
  KeepAlive: {}
  SceneDetails: { readonly text: string }
  ContinuationFragment: { readonly text: string }
}>

export const ProviderEvent = Data.taggedEnum<ProviderEvent>()
