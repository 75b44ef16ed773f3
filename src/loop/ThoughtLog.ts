import { Context, Effect, Layer } from "effect"

/** A hidden notice for operators (tool failures, deliberate-mode triggers, truncations); never shown to users. */
export interface HiddenNotice {
  readonly kind:
    | "tool_failed"
    | "tool_arguments_truncated"
    | "deliberate_trigger"
    | "delivery_failed"
    | "provider_failed"
    // Response Drafting: a reviewer decision, and a draft or tool request that went ahead unreviewed.
    | "draft_review"
    | "draft_unreviewed"
    // The context budget cut the message being answered to fit the model's window.
    | "context_cut"
    // The model's reasoning for a reply (an excerpt).
    | "reasoning"
  readonly severity: "error" | "info"
  readonly title: string
  readonly description: string
  /** JSON details (credential-redacted args, data), already capped at 1800 characters. */
  readonly details?: string
  readonly channelId: string
  readonly guildId: string | undefined
}

/** Where hidden notices go: the Discord thought-log channel when configured, else the log. */
export class ThoughtLog extends Context.Service<ThoughtLog, {
  readonly post: (notice: HiddenNotice) => Effect.Effect<void>
}>()("loopcord/loop/ThoughtLog") {
  /** Logs each notice (the default when no thought-log channel is configured). */
  static readonly logged = Layer.succeed(ThoughtLog, {
    post: (notice) =>
      (notice.severity === "error" ? Effect.logError : Effect.logInfo)(`[thought-log] ${notice.title}: ${notice.description}`).pipe(
        Effect.annotateLogs({ kind: notice.kind, channelId: notice.channelId, ...(notice.details === undefined ? {} : { details: notice.details }) })
      )
  })
}
