import * as SqlClient from "@effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Schema } from "effect"
import { personaKey, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

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

const STORE = "ShortTermMemoryStore"

const scopeKey = (scope: MemoryScope): string => (scope.kind === "guild" ? `guild:${scope.guildId}` : `dm:${scope.userId}`)

const MemoryRow = Schema.Struct({
  memory: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.String }))
})

const make: Effect.Effect<ShortTermMemoryStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const get = Effect.fn("ShortTermMemoryStore.get")(
    function* (scope: MemoryScope, personaId: string | undefined) {
      const rows = yield* sql`SELECT memory FROM short_term_memory
        WHERE scope_key = ${scopeKey(scope)} AND persona_key = ${personaKey(personaId)}`
      const row = rows[0]
      if (row === undefined) return {}
      const decoded = yield* Schema.decodeUnknown(MemoryRow)(row)
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

export class ShortTermMemoryStore extends Context.Tag("loopcord/store/ShortTermMemoryStore")<
  ShortTermMemoryStore,
  ShortTermMemoryStoreShape
>() {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
