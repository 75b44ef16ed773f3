import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { DbBigInt, DbOptionalText, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/** A guild channel where the bot answers every message, not only mentions (`/channel enable`). */
interface EnabledChannel {
  readonly guildId: string
  readonly channelId: string
  readonly enabledBy: string | undefined
  readonly enabledAt: number
}

interface EnabledChannelStoreShape {
  /** Idempotent: enabling an enabled channel keeps the first record. */
  readonly enable: (guildId: string, channelId: string, enabledBy?: string) => Effect.Effect<void, StoreError>
  /** True when the channel was enabled. */
  readonly disable: (guildId: string, channelId: string) => Effect.Effect<boolean, StoreError>
  readonly isEnabled: (guildId: string, channelId: string) => Effect.Effect<boolean, StoreError>
  /** Oldest first. */
  readonly list: (guildId: string) => Effect.Effect<ReadonlyArray<EnabledChannel>, StoreError>
}

const STORE = "EnabledChannelStore"

const ChannelRow = Schema.Struct({
  guild_id: Schema.String,
  channel_id: Schema.String,
  enabled_by: DbOptionalText,
  enabled_at: DbBigInt
})

const make: Effect.Effect<EnabledChannelStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const enable = Effect.fn("EnabledChannelStore.enable")(
    function* (guildId: string, channelId: string, enabledBy?: string) {
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO enabled_channels (guild_id, channel_id, enabled_by, enabled_at)
        VALUES (${guildId}, ${channelId}, ${enabledBy ?? null}, ${now})
        ON CONFLICT (guild_id, channel_id) DO NOTHING`
    },
    Effect.mapError(storeFailure(STORE, "enable"))
  )

  const disable = Effect.fn("EnabledChannelStore.disable")(
    function* (guildId: string, channelId: string) {
      const removed = yield* sql`DELETE FROM enabled_channels
        WHERE guild_id = ${guildId} AND channel_id = ${channelId} RETURNING channel_id`
      return removed.length > 0
    },
    Effect.mapError(storeFailure(STORE, "disable"))
  )

  const isEnabled = Effect.fn("EnabledChannelStore.isEnabled")(
    function* (guildId: string, channelId: string) {
      const rows = yield* sql`SELECT channel_id FROM enabled_channels
        WHERE guild_id = ${guildId} AND channel_id = ${channelId}`
      return rows.length > 0
    },
    Effect.mapError(storeFailure(STORE, "isEnabled"))
  )

  const list = Effect.fn("EnabledChannelStore.list")(
    function* (guildId: string) {
      const rows = yield* sql`SELECT guild_id, channel_id, enabled_by, enabled_at FROM enabled_channels
        WHERE guild_id = ${guildId} ORDER BY enabled_at, channel_id`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(ChannelRow))(rows)
      return decoded.map(
        (row): EnabledChannel => ({
          guildId: row.guild_id,
          channelId: row.channel_id,
          enabledBy: row.enabled_by,
          enabledAt: row.enabled_at
        })
      )
    },
    Effect.mapError(storeFailure(STORE, "list"))
  )

  return { enable, disable, isEnabled, list }
})

export class EnabledChannelStore extends Context.Service<
  EnabledChannelStore,
  EnabledChannelStoreShape
>()("loopcord/store/EnabledChannelStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
