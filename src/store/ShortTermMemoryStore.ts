import { Context, type Effect } from "effect"
import type { StoreError } from "./StoreError"

/**
 * Where a short-term memory lives: one map per guild (shared by its channels) or per DM user,
 * and per persona (spec seed 000 step 10; TomoriBot `update_short_term_memory`).
 */
export type MemoryScope =
  | { readonly kind: "guild"; readonly guildId: string }
  | { readonly kind: "dm"; readonly userId: string }

/** The scope of a turn: its guild, or the DM with the triggering user. */
export const memoryScopeOf = (turn: { readonly guildId: string | undefined; readonly userId: string }): MemoryScope =>
  turn.guildId === undefined ? { kind: "dm", userId: turn.userId } : { kind: "guild", guildId: turn.guildId }

/** Category name → text (e.g. `summary`, `scene_state`). */
export type ShortTermMemory = Readonly<Record<string, string>>

export interface ShortTermMemoryStoreShape {
  /** The scope's map for the persona (`undefined` = the default persona); `{}` when never written. */
  readonly get: (scope: MemoryScope, personaId: string | undefined) => Effect.Effect<ShortTermMemory, StoreError>
  /** Replaces the whole map (categories left out are dropped); `{}` clears it. */
  readonly replace: (
    scope: MemoryScope,
    personaId: string | undefined,
    memory: ShortTermMemory
  ) => Effect.Effect<void, StoreError>
}

export class ShortTermMemoryStore extends Context.Tag("loopcord/store/ShortTermMemoryStore")<
  ShortTermMemoryStore,
  ShortTermMemoryStoreShape
>() {}
