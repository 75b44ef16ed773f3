import type { ImageMetadata } from "./ImageMetadata"

/** What a tool returns. A failure is data handed back to the model, never a loop failure. */
export interface ToolResult {
  readonly success: boolean
  readonly data?: unknown
  readonly error?: string
  readonly message?: string
  /** For operators only, never replayed to the model. */
  readonly detail?: string
  readonly endTurn?: boolean
  readonly imageMetadata?: ImageMetadata
  readonly responseDelivered?: boolean
}

export const ToolResult = (result: ToolResult): ToolResult => ({ ...result })

export const toolSuccess = (data?: unknown, extra: Omit<ToolResult, "success" | "data"> = {}): ToolResult =>
  ToolResult({ ...extra, success: true, ...(data === undefined ? {} : { data }) })

export const toolFailure = (error: string, extra: Omit<ToolResult, "success" | "error"> = {}): ToolResult =>
  ToolResult({ ...extra, success: false, error })

/** The reason fed to the model for a failed result. */
export const failureReason = (result: ToolResult): string =>
  result.message || result.error || "Tool execution failed without specific error"

/** What operators read about a failed result: the reason the model saw, then the details. */
export const operatorReason = (result: ToolResult): string =>
  result.detail === undefined || result.detail === "" ? failureReason(result) : `${failureReason(result)} [detail: ${result.detail}]`
