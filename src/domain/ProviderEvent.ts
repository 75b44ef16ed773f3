import { Data } from "effect"
import type { FunctionCall } from "./FunctionCall"
import type { TokenUsage } from "./TokenUsage"

/** Why the provider stopped generating. `length`/`content_filter` mean output was cut. */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other"

/**
 * One normalized event of a provider stream. Native and verbatim tool calls both arrive as
 * `ToolCall`; keep-alives prove the connection is alive but are not content.
 */
export type ProviderEvent = Data.TaggedEnum<{
  TextDelta: { readonly text: string }
  /** Hidden reasoning / thinking text (thought log), never shown as the reply. */
  ReasoningDelta: { readonly text: string }
  ToolCall: { readonly call: FunctionCall }
  Usage: { readonly usage: TokenUsage }
  Finish: { readonly reason: FinishReason }
  KeepAlive: {}
  /**
   * NovelAI scene metadata: the body of a `<details>` block drained from the visible text.
   * Kept for the result and memory, never shown as the reply.
   */
  SceneDetails: { readonly text: string }
  /**
   * NovelAI: the trailing incomplete sentence the provider held back when its output budget
   * ran out. Generated, not shown.
   */
  ContinuationFragment: { readonly text: string }
}>

export const ProviderEvent = Data.taggedEnum<ProviderEvent>()

/** Whether an event counts as model output for the first-token and inactivity budgets. */
export const isContent = (event: ProviderEvent): boolean => event._tag !== "KeepAlive"
