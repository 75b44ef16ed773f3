import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError"

/**
 * Per-guild opt-in capabilities (`/capabilities manage`). Every capability is off until an
 * admin turns it on.
 * - `user_blocking_enabled`: the persona may call `block_user` / `unblock_user`.
 * - `deliberate_tool_mode`: tools are exposed only when the message asks for them (spec §3 step 5).
 */
export const GUILD_CAPABILITIES = ["user_blocking_enabled", "deliberate_tool_mode"] as const

export type GuildCapability = (typeof GUILD_CAPABILITIES)[number]

export const isGuildCapability = (name: string): name is GuildCapability =>
  (GUILD_CAPABILITIES as ReadonlyArray<string>).includes(name)

/** Every capability with its current value (false when never set). */
export type GuildSettings = Readonly<Record<GuildCapability, boolean>>

export const defaultGuildSettings: GuildSettings = {
  user_blocking_enabled: false,
  deliberate_tool_mode: false
}

export interface GuildSettingsStoreShape {
  readonly get: (guildId: string) => Effect.Effect<GuildSettings, StoreError>
  readonly isEnabled: (guildId: string, capability: GuildCapability) => Effect.Effect<boolean, StoreError>
  readonly setCapability: (
    guildId: string,
    capability: GuildCapability,
    enabled: boolean
  ) => Effect.Effect<void, StoreError>
}

export class GuildSettingsStore extends Context.Tag("loopcord/store/GuildSettingsStore")<
  GuildSettingsStore,
  GuildSettingsStoreShape
>() {}
