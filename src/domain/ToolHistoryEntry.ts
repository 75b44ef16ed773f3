import type { FunctionCall } from "./FunctionCall"
import type { ImageMetadata } from "./ImageMetadata"
import { failureReason, type ToolResult } from "./ToolResult"

/** Visible text a pass already delivered before its tool call. */
interface TextPart {
  readonly type: "text"
  readonly text: string
}

/** The function response replayed to the model: `{ name, response: { result } }`. */
interface FunctionResponse {
  readonly name: string
  readonly response: { readonly result: unknown }
}

/** One paired call and response replayed to the provider on the next passes of the turn. */
export interface ToolHistoryEntry {
  readonly functionCall: FunctionCall
  readonly functionResponse: FunctionResponse
  readonly imageMetadata?: ImageMetadata
  /**
   * Text this pass posted before its calls, so the model knows it already said it. A pass that
   * made several calls keeps it on the first entry of its batch only.
   */
  readonly preToolCallTextParts?: ReadonlyArray<TextPart>
  /**
   * The number of the pass that made the call; consecutive entries with the same `batch` were
   * made together in one assistant turn and are replayed as one. Undefined = its own turn
   * (older records).
   */
  readonly batch?: number
}

export const ToolHistoryEntry = (entry: ToolHistoryEntry): ToolHistoryEntry => ({ ...entry })

/** What the model is told: success ⇒ the data or `{status:"completed"}`; failure ⇒ the standard failure object. */
export const responsePayload = (toolName: string, result: ToolResult): unknown =>
  result.success
    ? (result.data === undefined ? { status: "completed" } : result.data)
    : { status: "tool_execution_failed", reason: failureReason(result), tool_name: toolName }

/** `[{type:"text", text}]` for non-blank text, else undefined (blank text is never stored). */
export const preToolTextParts = (text: string | undefined): ReadonlyArray<TextPart> | undefined =>
  text !== undefined && text.trim().length > 0 ? [{ type: "text", text }] : undefined
