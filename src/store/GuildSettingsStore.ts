import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { DbFlag, flagValue, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * Per-guild opt-in capabilities (`/capabilities manage`). Every capability is off until an
 * admin turns it on.
 * - `user_blocking_enabled`: the persona may call `block_user` / `unblock_user`.
 * - `deliberate_tool_mode`: tools are exposed only when the message asks for them.
 * - `server_wide_memory`: one short-term memory for the whole server instead of one per channel.
 * - `user_byok_mode`: every user brings their own API key (`/key personal`); the server's key and
 *   the operator's pool never answer for them.
 * - `reasoning_as_spoiler` / `reasoning_as_file`: the model's reasoning (native, or written into
 *   its text as `<think>…</think>`) is shown after the reply, as a spoiler or an attached `.txt`,
 *   instead of only reaching the thought log.
 */
export const GUILD_CAPABILITIES = [
  "user_blocking_enabled",
  "deliberate_tool_mode",
  "server_wide_memory",
  "user_byok_mode",
  "reasoning_as_spoiler",
  "reasoning_as_file"
] as const

type GuildCapability = (typeof GUILD_CAPABILITIES)[number]

export const isGuildCapability = (name: string): name is GuildCapability =>
  (GUILD_CAPABILITIES as ReadonlyArray<string>).includes(name)

/** Every capability with its current value (false when never set). */
export type GuildSettings = Readonly<Record<GuildCapability, boolean>>

export const defaultGuildSettings: GuildSettings = {
  user_blocking_enabled: false,
  deliberate_tool_mode: false,
  server_wide_memory: false,
  user_byok_mode: false,
  reasoning_as_spoiler: false,
  reasoning_as_file: false
}

interface GuildSettingsStoreShape {
  readonly get: (guildId: string) => Effect.Effect<GuildSettings, StoreError>
  readonly isEnabled: (guildId: string, capability: GuildCapability) => Effect.Effect<boolean, StoreError>
  readonly setCapability: (
    guildId: string,
    capability: GuildCapability,
    enabled: boolean
  ) => Effect.Effect<void, StoreError>
}

const STORE = "GuildSettingsStore"

// Unknown names (a capability a newer version wrote) are read as plain strings and skipped.
const CapabilityRow = Schema.Struct({ capability: Schema.String, enabled: DbFlag })

const make: Effect.Effect<GuildSettingsStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const get = Effect.fn("GuildSettingsStore.get")(
    function* (guildId: string) {
      const rows = yield* sql`SELECT capability, enabled FROM guild_capabilities WHERE guild_id = ${guildId}`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(CapabilityRow))(rows)
      const settings: Record<GuildCapability, boolean> = { ...defaultGuildSettings }
      for (const row of decoded) {
        if (isGuildCapability(row.capability)) settings[row.capability] = row.enabled
      }
      return settings
    },
    Effect.mapError(storeFailure(STORE, "get"))
  )

  const isEnabled = Effect.fn("GuildSettingsStore.isEnabled")(
    function* (guildId: string, capability: GuildCapability) {
      const rows = yield* sql`SELECT capability, enabled FROM guild_capabilities
        WHERE guild_id = ${guildId} AND capability = ${capability}`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(CapabilityRow))(rows)
      return decoded[0]?.enabled ?? defaultGuildSettings[capability]
    },
    Effect.mapError(storeFailure(STORE, "isEnabled"))
  )

  const setCapability = Effect.fn("GuildSettingsStore.setCapability")(
    function* (guildId: string, capability: GuildCapability, enabled: boolean) {
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO guild_capabilities (guild_id, capability, enabled, updated_at)
        VALUES (${guildId}, ${capability}, ${flagValue(enabled)}, ${now})
        ON CONFLICT (guild_id, capability) DO UPDATE SET enabled = excluded.enabled, updated_at = excluded.updated_at`
    },
    Effect.mapError(storeFailure(STORE, "setCapability"))
  )

  return { get, isEnabled, setCapability }
})

export class GuildSettingsStore extends Context.Service<
  GuildSettingsStore,
  GuildSettingsStoreShape
>()("loopcord/store/GuildSettingsStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
