import { Data } from "effect"

/**
 * Under user impersonation a tool-error loop is not shown as a notice: the turn is aborted and
 * the error propagates to the front (spec §2.3 step 6, §5 scenario 71).
 */
export class ImpersonationAbortedError extends Data.TaggedError("ImpersonationAbortedError")<{
  readonly failures: number
  readonly lastTool: string
}> {
  override get message(): string {
    return "User impersonation aborted: model failed too many tool calls in a row."
  }
}
