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
  /** NovelAI: a tool kept failing after visible text, retried without re-posting, given up (ERROR). */
  NovelAiToolRetryExhausted: { readonly failures: number; readonly lastTool: string }
  /**
   * A stream exceeded its first-token or inactivity budget. `personalKey`: the attempt ran on the
   * user's own key (the user's provider account is the one to check).
   */
  StreamTimeout: { readonly provider: string; readonly phase: "first_token" | "idle"; readonly personalKey?: true }
  /**
   * A fallback model answered after earlier models failed. Public: model names and failure
   * classes only; the vendor's words are in the thought log.
   */
  FallbackUsed: { readonly model: string; readonly failures: ReadonlyArray<{ readonly model: string; readonly reason: FailureClass }> }
  /** Every attempt failed: the last model and why, as a class. */
  ProviderFailed: { readonly model: string; readonly reason: FailureClass }
  /**
   * The server's key was not used for this user: a cooldown or a daily quota refused
   * admission, or the server asks every user to bring their own key (`user_byok_mode`).
   */
  ServerRouteRefused: {
    readonly reason: "cooldown" | "server_quota" | "user_quota" | "user_byok_mode"
    /** For a cooldown: how long until the next server-paid turn is admitted. */
    readonly retryAfterMs: number | undefined
  }
  /**
   * The message being answered was longer than the model's context window allows: the model saw
   * its start and end only.
   */
  MessageShortened: { readonly keptChars: number; readonly totalChars: number }
  /** The turn was stopped with /kill. */
  Stopped: {}
  /** A tool's progress line ("Searching the web…"). */
  ToolProgress: { readonly tool: string; readonly text: string }
}>

export const UserNotice = Data.taggedEnum<UserNotice>()
