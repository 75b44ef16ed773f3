import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Option, Schema } from "effect"
import { DbBigInt, DbOptionalText, invalidInput, personaIdOf, personaKey, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * `mute`: the persona ignores the user's messages as triggers (context unchanged).
 * `block`: also replaces the user's messages in context by a notice (docs/architecture.md, Persona blocks).
 */
type BlockMode = "mute" | "block"

/** Bounds of one block, in whole hours (1 hour to 30 days). */
export const MIN_BLOCK_HOURS = 1
export const MAX_BLOCK_HOURS = 720

/** An active (or, when read back later, possibly expired) persona-scoped block of one guild member. */
export interface PersonaUserBlock {
  readonly guildId: string
  /** `undefined` = the default persona. */
  readonly personaId: string | undefined
  readonly userId: string
  /** Name the persona knows the user by (used in the context notice). */
  readonly userName: string
  readonly mode: BlockMode
  readonly reason: string | undefined
  /** Who asked for it: the triggering user's id for the tool, an admin for commands. */
  readonly blockedBy: string | undefined
  readonly createdAt: number
  /** Epoch millis on the Effect Clock; the block is active while `now < expiresAt`. */
  readonly expiresAt: number
}

interface BlockRequest {
  readonly guildId: string
  readonly personaId: string | undefined
  readonly userId: string
  readonly userName: string
  readonly mode: BlockMode
  /** Whole hours in [MIN_BLOCK_HOURS, MAX_BLOCK_HOURS]; anything else fails with `invalid_input`. */
  readonly hours: number
  readonly reason?: string | undefined
  readonly blockedBy?: string | undefined
}

interface PersonaBlockStoreShape {
  /** Creates or replaces the user's block for this persona; expiry = Clock now + hours. */
  readonly block: (request: BlockRequest) => Effect.Effect<PersonaUserBlock, StoreError>
  /** Removes the user's block; the removed one when it was still active. */
  readonly unblock: (
    guildId: string,
    personaId: string | undefined,
    userId: string
  ) => Effect.Effect<Option.Option<PersonaUserBlock>, StoreError>
  /** Every unexpired block of this persona in the guild (expired rows are ignored and pruned). */
  readonly activeBlocks: (
    guildId: string,
    personaId: string | undefined
  ) => Effect.Effect<ReadonlyArray<PersonaUserBlock>, StoreError>
  /** The user's unexpired block for this persona, if any (the trigger check of the Discord front). */
  readonly activeBlock: (
    guildId: string,
    personaId: string | undefined,
    userId: string
  ) => Effect.Effect<Option.Option<PersonaUserBlock>, StoreError>
}

const STORE = "PersonaBlockStore"
const HOUR_MS = 3_600_000

const BlockRow = Schema.Struct({
  guild_id: Schema.String,
  persona_key: Schema.String,
  user_id: Schema.String,
  user_name: Schema.String,
  mode: Schema.Literals(["mute", "block"]),
  reason: DbOptionalText,
  blocked_by: DbOptionalText,
  created_at: DbBigInt,
  expires_at: DbBigInt
})

const toBlock = (row: typeof BlockRow.Type): PersonaUserBlock => ({
  guildId: row.guild_id,
  personaId: personaIdOf(row.persona_key),
  userId: row.user_id,
  userName: row.user_name,
  mode: row.mode,
  reason: row.reason,
  blockedBy: row.blocked_by,
  createdAt: row.created_at,
  expiresAt: row.expires_at
})

const decodeBlocks = Schema.decodeUnknownEffect(Schema.Array(BlockRow))

const validHours = (hours: number): boolean =>
  Number.isSafeInteger(hours) && hours >= MIN_BLOCK_HOURS && hours <= MAX_BLOCK_HOURS

const make: Effect.Effect<PersonaBlockStoreShape, never, SqlClient.SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const selectBlocks = (guildId: string, persona: string, now: number, userId?: string) =>
    sql`SELECT guild_id, persona_key, user_id, user_name, mode, reason, blocked_by, created_at, expires_at
      FROM persona_user_blocks
      WHERE guild_id = ${guildId} AND persona_key = ${persona} AND expires_at > ${now}
      ${userId === undefined ? sql`` : sql`AND user_id = ${userId}`}
      ORDER BY created_at, user_id`.pipe(Effect.flatMap(decodeBlocks), Effect.map((rows) => rows.map(toBlock)))

  const block = Effect.fn("PersonaBlockStore.block")(function* (request: BlockRequest) {
    if (!validHours(request.hours)) {
      return yield* invalidInput(STORE, "block", `hours must be a whole number from ${MIN_BLOCK_HOURS} to ${MAX_BLOCK_HOURS}`)
    }
    if (request.guildId === "" || request.userId === "") {
      return yield* invalidInput(STORE, "block", "guildId and userId are required")
    }
    const now = yield* Clock.currentTimeMillis
    const stored: PersonaUserBlock = {
      guildId: request.guildId,
      personaId: request.personaId,
      userId: request.userId,
      userName: request.userName,
      mode: request.mode,
      reason: request.reason,
      blockedBy: request.blockedBy,
      createdAt: now,
      expiresAt: now + request.hours * HOUR_MS
    }
    yield* sql`INSERT INTO persona_user_blocks
        (guild_id, persona_key, user_id, user_name, mode, reason, blocked_by, created_at, expires_at)
      VALUES (${stored.guildId}, ${personaKey(stored.personaId)}, ${stored.userId}, ${stored.userName}, ${stored.mode},
        ${stored.reason ?? null}, ${stored.blockedBy ?? null}, ${stored.createdAt}, ${stored.expiresAt})
      ON CONFLICT (guild_id, persona_key, user_id) DO UPDATE SET
        user_name = excluded.user_name, mode = excluded.mode, reason = excluded.reason,
        blocked_by = excluded.blocked_by, created_at = excluded.created_at, expires_at = excluded.expires_at`.pipe(
      Effect.mapError(storeFailure(STORE, "block"))
    )
    return stored
  })

  const unblock = Effect.fn("PersonaBlockStore.unblock")(
    function* (guildId: string, personaId: string | undefined, userId: string) {
      const persona = personaKey(personaId)
      const now = yield* Clock.currentTimeMillis
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          const active = yield* selectBlocks(guildId, persona, now, userId)
          yield* sql`DELETE FROM persona_user_blocks
            WHERE guild_id = ${guildId} AND persona_key = ${persona} AND user_id = ${userId}`
          return Option.fromNullishOr(active[0])
        })
      )
    },
    Effect.mapError(storeFailure(STORE, "unblock"))
  )

  const activeBlocks = Effect.fn("PersonaBlockStore.activeBlocks")(
    function* (guildId: string, personaId: string | undefined) {
      const persona = personaKey(personaId)
      const now = yield* Clock.currentTimeMillis
      // Expired rows would never match again; dropping them keeps the table small.
      yield* sql`DELETE FROM persona_user_blocks
        WHERE guild_id = ${guildId} AND persona_key = ${persona} AND expires_at <= ${now}`
      return yield* selectBlocks(guildId, persona, now)
    },
    Effect.mapError(storeFailure(STORE, "activeBlocks"))
  )

  const activeBlock = Effect.fn("PersonaBlockStore.activeBlock")(
    function* (guildId: string, personaId: string | undefined, userId: string) {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* selectBlocks(guildId, personaKey(personaId), now, userId)
      return Option.fromNullishOr(rows[0])
    },
    Effect.mapError(storeFailure(STORE, "activeBlock"))
  )

  return { block, unblock, activeBlocks, activeBlock }
})

export class PersonaBlockStore extends Context.Service<
  PersonaBlockStore,
  PersonaBlockStoreShape
>()("loopcord/store/PersonaBlockStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
