import { Data } from "effect"
import type { ImageMetadata } from "./ImageMetadata"

/**
 * What a tool returns (spec §1.3). A failure is data handed back to the model, never a loop
 * failure. `message` is preferred over `error` as the reason the model sees.
 */
export interface ToolResult {
  readonly success: boolean
  /** Model-visible payload on success; replayed verbatim as the function response. */
  readonly data?: unknown
  readonly error?: string
  readonly message?: string
  /** End the turn right after this tool (status `completed`). */
  readonly endTurn?: boolean
  readonly imageMetadata?: ImageMetadata
  /** The tool itself delivered the user-visible reply, so an empty follow-up may settle. */
  readonly responseDelivered?: boolean
}

export const ToolResult = Data.case<ToolResult>()

export const toolSuccess = (data?: unknown, extra: Omit<ToolResult, "success" | "data"> = {}): ToolResult =>
  ToolResult({ ...extra, success: true, ...(data === undefined ? {} : { data }) })

export const toolFailure = (error: string, extra: Omit<ToolResult, "success" | "error"> = {}): ToolResult =>
  ToolResult({ ...extra, success: false, error })

/** The reason fed to the model for a failed result (spec §1.4). */
export const failureReason = (result: ToolResult): string =>
  result.message || result.error || "Tool execution failed without specific error"
