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

/** One paired call and response replayed to the provider on the next pass. */
export interface ToolHistoryEntry {
  readonly functionCall: FunctionCall
  readonly functionResponse: FunctionResponse
  readonly imageMetadata?: ImageMetadata
  /** Text this pass posted before the call, so the model knows it already said it. */
  readonly preToolCallTextParts?: ReadonlyArray<TextPart>
}

export const ToolHistoryEntry = Data.case<ToolHistoryEntry>()

/** Payload rules (docs/architecture.md, Tool results as the model sees them): success ⇒ data or `{status:"completed"}`; failure ⇒ the standard object. */
export const responsePayload = (toolName: string, result: ToolResult): unknown =>
  result.success
    ? (result.data === undefined ? { status: "completed" } : result.data)
    : { status: "tool_execution_failed", reason: failureReason(result), tool_name: toolName }

/** `[{type:"text", text}]` for non-blank text, else undefined (docs/architecture.md, Pre-tool text). */
export const preToolTextParts = (text: string | undefined): ReadonlyArray<TextPart> | undefined =>
  text !== undefined && text.trim().length > 0 ? [{ type: "text", text }] : undefined
