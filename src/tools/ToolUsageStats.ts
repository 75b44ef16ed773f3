import { Context, Effect, Layer } from "effect"

/**
 * `tool_used` statistics: successful, non-blocked, non-DM calls, fire-and-forget.
 * The loop runs `record` in a daemon fiber and never waits for it; an implementation bounds its
 * own work (the store's does, with `STORE_TIMEOUT_MS`), so no daemon outlives a hung database.
 */
export class ToolUsageStats extends Context.Service<ToolUsageStats, {
  readonly record: (toolName: string, guildId: string | undefined) => Effect.Effect<void>
}>()("loopcord/tools/ToolUsageStats") {
  static readonly none = Layer.succeed(ToolUsageStats, { record: () => Effect.void })
}
