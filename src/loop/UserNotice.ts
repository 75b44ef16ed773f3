import { Data } from "effect"
import type { FailureClass } from "./FailureClass"

/**
 * A notice the user sees beside the reply (spec: WARN/ERROR embeds). The front renders it
 * (an embed on Discord, a dim line in the terminal).
 */
export type UserNotice = Data.TaggedEnum<{
  /** Soft warning at the still-working iteration; mentions /kill. */
  StillWorking: { readonly iteration: number }
  /** The iteration cap was reached (`timeout`): never a silent empty answer. */
  MaxIterations: { readonly iterations: number }
  /** Too many consecutive tool failures (`error`). */
  ToolErrorLoop: { readonly failures: number; readonly lastTool: string }
  /** A stream exceeded its first-token or inactivity budget. */
  StreamTimeout: { readonly provider: string; readonly phase: "first_token" | "idle" }
  /**
   * A fallback model answered after earlier models failed. Public: model names and failure
   * classes only (decision 20); the vendor's words are in the thought log.
   */
  FallbackUsed: { readonly model: string; readonly failures: ReadonlyArray<{ readonly model: string; readonly reason: FailureClass }> }
  /** Every attempt failed: the last model and why, as a class (decision 20). */
  ProviderFailed: { readonly model: string; readonly reason: FailureClass }
  /** The turn was stopped with /kill. */
  Stopped: {}
  /** A tool's progress line ("Searching the web…"). */
  ToolProgress: { readonly tool: string; readonly text: string }
}>

export const UserNotice = Data.taggedEnum<UserNotice>()
