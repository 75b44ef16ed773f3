import { Data } from "effect"

/**
 * A tool could not do its job. The registry turns it into a failed ToolResult for the model
 * (`message` preferred over `error`), so it never fails the loop.
 */
export class ToolError extends Data.TaggedError("ToolError")<{
  readonly tool: string
  /** Short reason (becomes `ToolResult.error`): the model reads it, so a class, never internals. */
  readonly error: string
  /** Friendlier reason preferred for the model (becomes `ToolResult.message`). */
  readonly userMessage?: string
  /** What went wrong in full, for the logs and the thought log only (becomes `ToolResult.detail`). */
  readonly detail?: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `${this.tool}: ${this.error}`
  }
}
