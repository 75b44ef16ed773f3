import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError"

/** How often one tool succeeded in one guild (`tool_used`, spec §3 step 8). */
export interface ToolUsageCount {
  readonly toolName: string
  readonly uses: number
  readonly lastUsedAt: number
}

export interface ToolUsageStoreShape {
  /** Counts one successful call; DMs (no guild) are not counted. */
  readonly record: (toolName: string, guildId: string | undefined) => Effect.Effect<void, StoreError>
  /** Most used first (ties: most recently used first), at most `limit` (default 10). */
  readonly topTools: (guildId: string, limit?: number) => Effect.Effect<ReadonlyArray<ToolUsageCount>, StoreError>
}

/** Query side of the tool usage stats; its layer also provides the loop's `ToolUsageStats`. */
export class ToolUsageStore extends Context.Tag("loopcord/store/ToolUsageStore")<ToolUsageStore, ToolUsageStoreShape>() {}
