import { Data } from "effect"
import type { FunctionCall } from "./FunctionCall"
import type { ImageMetadata } from "./ImageMetadata"
import { failureReason, type ToolResult } from "./ToolResult"

/** Visible text a pass already delivered before its tool call. */
export interface TextPart {
  readonly type: "text"
  readonly text: string
}

/** The function response replayed to the model: `{ name, response: { result } }`. */
export interface FunctionResponse {
  readonly name: string
  readonly response: { readonly result: unknown }
}

/** One paired call and response replayed to the provider on the next pass (spec §1.4). */
export interface ToolHistoryEntry {
  readonly functionCall: FunctionCall
  readonly functionResponse: FunctionResponse
  readonly imageMetadata?: ImageMetadata
  /** Text this pass posted before the call, so the model knows it already said it. */
  readonly preToolCallTextParts?: ReadonlyArray<TextPart>
  /**
   * The number of the pass that made the call; consecutive entries with the same batch were
   * made together in one assistant turn.
   */
  readonly batch?: number
}

export const ToolHistoryEntry = Data.case<ToolHistoryEntry>()

/** Payload rules of spec §1.4: success ⇒ data or `{status:"completed"}`; failure ⇒ the standard object. */
export const responsePayload = (toolName: string, result: ToolResult): unknown =>
  result.success
    ? (result.data === undefined ? { status: "completed" } : result.data)
    : { status: "tool_execution_failed", reason: failureReason(result), tool_name: toolName }

/** `[{type:"text", text}]` for non-blank text, else undefined (spec §3 step 13). */
export const preToolTextParts = (text: string | undefined): ReadonlyArray<TextPart> | undefined =>
  text !== undefined && text.trim().length > 0 ? [{ type: "text", text }] : undefined
