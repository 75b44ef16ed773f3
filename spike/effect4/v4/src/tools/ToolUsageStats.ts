import { Context, Effect, Layer } from "effect"

/** `tool_used` statistics: successful, non-blocked, non-DM calls, fire-and-forget. */
export class ToolUsageStats extends Context.Service<ToolUsageStats, {
  readonly record: (toolName: string, guildId: string | undefined) => Effect.Effect<void>
}>()("loopcord/tools/ToolUsageStats") {
  static readonly none = Layer.succeed(ToolUsageStats, { record: () => Effect.void })
}
