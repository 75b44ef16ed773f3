import type { FunctionCall } from "../domain/FunctionCall"
import type { ToolResult } from "../domain/ToolResult"

/** What the dispatch phase of one call produced (run, refused or denied), before the shared post-processing. */
export interface DispatchedCall {
  readonly result: ToolResult
  /** The call as it is replayed to the model (arguments cleared when they could not be used). */
  readonly replayedCall: FunctionCall
  /** Blocked before it ran (deliberate tool mode, a denied approval): replayed as the structured block object. */
  readonly blocked: boolean
  /** The tool was actually dispatched (raced against its timeout and /kill). */
  readonly raced: boolean
  readonly durationMs: number
}
