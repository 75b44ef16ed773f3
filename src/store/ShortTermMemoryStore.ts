import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { personaKey, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * Where a short-term memory lives (docs/architecture.md, Short-term memory), per persona as well
 * (as TomoriBot's `update_short_term_memory` keeps it):
 * - `channel`: one guild channel (a thread uses its parent's), the default;
 * - `server`: the whole guild, when it turned on `server_wide_memory`;
 * - `dm`: the DM with one user.
 */
export type MemoryScope =
  | { readonly kind: "channel"; readonly guildId: string; readonly channelId: string }
  | { readonly kind: "server"; readonly guildId: string }
  | { readonly kind: "dm"; readonly userId: string }

/** Where a turn happens, as far as choosing its memory needs to know (front-agnostic). */
export interface MemoryPlace {
  readonly guildId: string | undefined
  readonly channelId: string
  /** The channel a thread belongs to: the thread shares that channel's memory. */
  readonly parentChannelId: string | undefined
  readonly userId: string
}

/**
 * The memory a turn reads and writes: the DM's, the server's when `serverWide` (the guild's
 * `server_wide_memory`), else its channel's (a thread's parent channel).
 */
export const memoryScopeOf = (place: MemoryPlace, serverWide: boolean): MemoryScope => {
  if (place.guildId === undefined) return { kind: "dm", userId: place.userId }
  if (serverWide) return { kind: "server", guildId: place.guildId }
  return { kind: "channel", guildId: place.guildId, channelId: place.parentChannelId ?? place.channelId }
}

/** Category name → text (e.g. `summary`, `scene_state`). */
export type ShortTermMemory = Readonly<Record<string, string>>

interface ShortTermMemoryStoreShape {
  /** The scope's map for the persona (`undefined` = the default persona); `{}` when never written. */
  readonly get: (scope: MemoryScope, personaId: string | undefined) => Effect.Effect<ShortTermMemory, StoreError>
  /** Replaces the whole map (categories left out are dropped); `{}` clears it. */
  readonly replace: (
    scope: MemoryScope,
    personaId: string | undefined,
    memory: ShortTermMemory
  ) => Effect.Effect<void, StoreError>
}

const STORE = "ShortTermMemoryStore"

/** The `scope_key` column; `server:` is where migration 2 put the per-server memory of before. */
const scopeKey = (scope: MemoryScope): string => {
  switch (scope.kind) {
    case "channel":
      return `channel:${scope.guildId}:${scope.channelId}`
    case "server":
      return `server:${scope.guildId}`
    case "dm":
      return `dm:${scope.userId}`
  }
}

const MemoryRow = Schema.Struct({
  memory: Schema.fromJsonString(Schema.Record(Schema.String, Schema.String))
})

const make: Effect.Effect<ShortTermMemoryStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const get = Effect.fn("ShortTermMemoryStore.get")(
    function* (scope: MemoryScope, personaId: string | undefined) {
      const rows = yield* sql`SELECT memory FROM short_term_memory
        WHERE scope_key = ${scopeKey(scope)} AND persona_key = ${personaKey(personaId)}`
      const row = rows[0]
      if (row === undefined) return {}
      const decoded = yield* Schema.decodeUnknownEffect(MemoryRow)(row)
      return decoded.memory
    },
    Effect.mapError(storeFailure(STORE, "get"))
  )

  const replace = Effect.fn("ShortTermMemoryStore.replace")(
    function* (scope: MemoryScope, personaId: string | undefined, memory: ShortTermMemory) {
      const key = scopeKey(scope)
      const persona = personaKey(personaId)
      if (Object.keys(memory).length === 0) {
        yield* sql`DELETE FROM short_term_memory WHERE scope_key = ${key} AND persona_key = ${persona}`
        return
      }
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO short_term_memory (scope_key, persona_key, memory, updated_at)
        VALUES (${key}, ${persona}, ${JSON.stringify(memory)}, ${now})
        ON CONFLICT (scope_key, persona_key)
        DO UPDATE SET memory = excluded.memory, updated_at = excluded.updated_at`
    },
    Effect.mapError(storeFailure(STORE, "replace"))
  )

  return { get, replace }
})

export class ShortTermMemoryStore extends Context.Service<
  ShortTermMemoryStore,
  ShortTermMemoryStoreShape
>()("loopcord/store/ShortTermMemoryStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
