import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { ToolUsageStats } from "../tools/ToolUsageStats"
import { DbBigInt, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/** How often one tool succeeded in one guild (`tool_used`: successful, unblocked calls outside DMs). */
interface ToolUsageCount {
  readonly toolName: string
  readonly uses: number
  readonly lastUsedAt: number
}

interface ToolUsageStoreShape {
  /** Counts one successful call; DMs (no guild) are not counted. */
  readonly record: (toolName: string, guildId: string | undefined) => Effect.Effect<void, StoreError>
  /** Most used first (ties: most recently used first), at most `limit` (default 10). */
  readonly topTools: (guildId: string, limit?: number) => Effect.Effect<ReadonlyArray<ToolUsageCount>, StoreError>
}

const STORE = "ToolUsageStore"
const DEFAULT_TOP_LIMIT = 10

const UsageRow = Schema.Struct({ tool_name: Schema.String, uses: DbBigInt, last_used_at: DbBigInt })

const make: Effect.Effect<ToolUsageStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const record = Effect.fn("ToolUsageStore.record")(
    function* (toolName: string, guildId: string | undefined) {
      if (guildId === undefined) return
      const now = yield* Clock.currentTimeMillis
      // One atomic upsert, so concurrent processes never lose a count.
      yield* sql`INSERT INTO tool_usage (guild_id, tool_name, uses, last_used_at)
        VALUES (${guildId}, ${toolName}, 1, ${now})
        ON CONFLICT (guild_id, tool_name)
        DO UPDATE SET uses = tool_usage.uses + 1, last_used_at = excluded.last_used_at`
    },
    Effect.mapError(storeFailure(STORE, "record"))
  )

  const topTools = Effect.fn("ToolUsageStore.topTools")(
    function* (guildId: string, limit: number = DEFAULT_TOP_LIMIT) {
      const bounded = Math.max(1, Math.min(100, Math.floor(limit)))
      const rows = yield* sql`SELECT tool_name, uses, last_used_at FROM tool_usage
        WHERE guild_id = ${guildId}
        ORDER BY uses DESC, last_used_at DESC, tool_name
        LIMIT ${bounded}`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(UsageRow))(rows)
      return decoded.map(
        (row): ToolUsageCount => ({ toolName: row.tool_name, uses: row.uses, lastUsedAt: row.last_used_at })
      )
    },
    Effect.mapError(storeFailure(STORE, "topTools"))
  )

  return { record, topTools }
})

/** Query side of the tool usage stats; its layer also provides the loop's `ToolUsageStats`. */
export class ToolUsageStore extends Context.Service<ToolUsageStore, ToolUsageStoreShape>()("loopcord/store/ToolUsageStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))

  /**
   * The loop's `ToolUsageStats` over this store. Statistics are fire-and-forget: a failed write is
   * logged and never reaches the tool loop.
   */
  static readonly statsLayer: Layer.Layer<ToolUsageStats, never, ToolUsageStore> = Layer.effect(
    ToolUsageStats,
    Effect.map(ToolUsageStore, (store) => ({
      record: (toolName: string, guildId: string | undefined) =>
        store.record(toolName, guildId).pipe(
          Effect.catch((error) => Effect.logWarning("Could not record tool usage", error.message))
        )
    }))
  )
}
