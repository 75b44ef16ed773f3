import { Effect } from "effect"
import { GuildSettingsStore } from "../../../store/GuildSettingsStore"
import { type MemoryPlace, type MemoryScope, memoryScopeOf } from "../../../store/ShortTermMemoryStore"
import type { StoreError } from "../../../store/StoreError"

/** Picks the short-term memory of a place: its channel's, or the server's when the guild shares one. */
type MemoryScopeResolver = (place: MemoryPlace) => Effect.Effect<MemoryScope, StoreError>

/**
 * The resolver the memory tool and the context enricher share, so a turn writes the memory it
 * was shown. A guild's `server_wide_memory` is read on every call (an admin's change applies to
 * the next turn); a DM needs no lookup. A failed lookup is an error, never a guess: falling back
 * to the server's memory would show one channel's notes in another.
 */
export const makeMemoryScopeResolver: Effect.Effect<MemoryScopeResolver, never, GuildSettingsStore> = Effect.map(
  GuildSettingsStore,
  (settings) => (place) =>
    place.guildId === undefined
      ? Effect.succeed(memoryScopeOf(place, false))
      : Effect.map(settings.isEnabled(place.guildId, "server_wide_memory"), (serverWide) => memoryScopeOf(place, serverWide))
)
