import { Data } from "effect"

/** A tool could not do its job; the registry turns it into a failed ToolResult for the model. */
export class ToolError extends Data.TaggedError("ToolError")<{
  readonly tool: string
  readonly error: string
  readonly userMessage?: string
  readonly detail?: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `${this.tool}: ${this.error}`
  }
}
