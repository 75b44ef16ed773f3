import type { ImageMetadata } from "./ImageMetadata"
import type { TurnEffect } from "./TurnEffect"

/**
 * What a tool returns. A failure is data handed back to the model, never a loop
 * failure. `message` is preferred over `error` as the reason the model sees.
 */
export interface ToolResult {
  readonly success: boolean
  /** Model-visible payload on success; replayed verbatim as the function response. */
  readonly data?: unknown
  readonly error?: string
  readonly message?: string
  /**
   * For operators only (the logs and the thought log), never replayed to the model: what went
   * wrong in full (addresses, hosts, a vendor's error text). `error` and `message` name the
   * class of the failure only (the model repeats what it reads).
   */
  readonly detail?: string
  /** End the turn right after this tool (status `completed`). */
  readonly endTurn?: boolean
  readonly imageMetadata?: ImageMetadata
  /** The tool itself delivered the user-visible reply, so an empty follow-up may settle. */
  readonly responseDelivered?: boolean
  /** A change to the reply itself (a sticker to send), applied by the loop; never replayed to the model. */
  readonly turnEffect?: TurnEffect
}

export const ToolResult = (result: ToolResult): ToolResult => ({ ...result })

export const toolSuccess = (data?: unknown, extra: Omit<ToolResult, "success" | "data"> = {}): ToolResult =>
  ToolResult({ ...extra, success: true, ...(data === undefined ? {} : { data }) })

export const toolFailure = (error: string, extra: Omit<ToolResult, "success" | "error"> = {}): ToolResult =>
  ToolResult({ ...extra, success: false, error })

/** The reason fed to the model for a failed result: `message`, else `error`, else a generic one. */
export const failureReason = (result: ToolResult): string =>
  result.message || result.error || "Tool execution failed without specific error"

/** What operators read about a failed result: the reason the model saw, then the details. */
export const operatorReason = (result: ToolResult): string =>
  result.detail === undefined || result.detail === "" ? failureReason(result) : `${failureReason(result)} [detail: ${result.detail}]`
