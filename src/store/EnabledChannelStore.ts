import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError"

/** A guild channel where the bot answers every message, not only mentions (`/channel enable`). */
export interface EnabledChannel {
  readonly guildId: string
  readonly channelId: string
  readonly enabledBy: string | undefined
  readonly enabledAt: number
}

export interface EnabledChannelStoreShape {
  /** Idempotent: enabling an enabled channel keeps the first record. */
  readonly enable: (guildId: string, channelId: string, enabledBy?: string) => Effect.Effect<void, StoreError>
  /** True when the channel was enabled. */
  readonly disable: (guildId: string, channelId: string) => Effect.Effect<boolean, StoreError>
  readonly isEnabled: (guildId: string, channelId: string) => Effect.Effect<boolean, StoreError>
  /** Oldest first. */
  readonly list: (guildId: string) => Effect.Effect<ReadonlyArray<EnabledChannel>, StoreError>
}

export class EnabledChannelStore extends Context.Tag("loopcord/store/EnabledChannelStore")<
  EnabledChannelStore,
  EnabledChannelStoreShape
>() {}
