import { Data } from "effect"

/**
 * Under user impersonation a tool-error loop is not shown as a notice: the turn is aborted and
 * the error propagates to the front, which decides (docs/architecture.md, "Loop guards").
 */
export class ImpersonationAbortedError extends Data.TaggedError("ImpersonationAbortedError")<{
  readonly failures: number
  readonly lastTool: string
}> {
  override get message(): string {
    return "User impersonation aborted: model failed too many tool calls in a row."
  }
}
