import { Context, Effect, Layer } from "effect"

/** `tool_used` statistics (spec §3 step 8): successful, non-blocked, non-DM calls, fire-and-forget. */
export class ToolUsageStats extends Context.Tag("loopcord/tools/ToolUsageStats")<ToolUsageStats, {
  readonly record: (toolName: string, guildId: string | undefined) => Effect.Effect<void>
}>() {
  static readonly none = Layer.succeed(ToolUsageStats, { record: () => Effect.void })
}
