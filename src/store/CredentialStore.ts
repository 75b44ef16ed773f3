import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Data, Effect, Result, Layer, Option, type Redacted, Schema } from "effect"
import { DbBigInt, DbFlag, flagValue, storeFailure } from "./columns"
import { SecretBox, type SecretKeyMissingError, type SecretUnreadableError } from "./SecretBox"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * The API keys users and servers bring (`/key personal`, `/key server`), sealed at rest, and the
 * user's opt-out of the server route. A key is read for every turn of its owner, so a key sealed
 * under `LOOPCORD_SECRET_KEY_PREVIOUS` is re-sealed under the current key on its first read.
 */

/** Whose key: a user's personal key or a server's (guild's) key. */
export interface KeyOwner {
  readonly kind: "user" | "guild"
  readonly id: string
}

/** A key the provider would be sent as is: printable ASCII without spaces, 8 to 512 characters. */
const API_KEY_MIN_LENGTH = 8
export const API_KEY_MAX_LENGTH = 512
const API_KEY_PATTERN = /^[\x21-\x7e]+$/

/** A key value that cannot be a provider key; the value itself is never part of the message. */
class InvalidApiKeyError extends Data.TaggedError("InvalidApiKeyError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/** The trimmed key, or why it is refused (pure). */
export const validateApiKey = (raw: string): Result.Result<string, InvalidApiKeyError> => {
  const key = raw.trim()
  if (key.length < API_KEY_MIN_LENGTH || key.length > API_KEY_MAX_LENGTH) {
    return Result.fail(new InvalidApiKeyError({ detail: `An API key is ${API_KEY_MIN_LENGTH} to ${API_KEY_MAX_LENGTH} characters long.` }))
  }
  if (!API_KEY_PATTERN.test(key)) {
    return Result.fail(new InvalidApiKeyError({
      detail: "An API key is printable ASCII without spaces (paste only the key, without 'Bearer')."
    }))
  }
  return Result.succeed(key)
}

/** What is stored for an owner. `Unusable`: a key is stored but does not open (reported, never used). */
export type StoredKey = Data.TaggedEnum<{
  None: {}
  Usable: { readonly key: Redacted.Redacted<string>; readonly setBy: string; readonly updatedAt: number }
  Unusable: { readonly reason: SecretUnreadableError["reason"]; readonly setBy: string; readonly updatedAt: number }
}>
export const StoredKey = Data.taggedEnum<StoredKey>()

interface CredentialStoreShape {
  /** Seals and stores the owner's key (replacing one). Refused without LOOPCORD_SECRET_KEY or for a malformed value. */
  readonly setKey: (
    owner: KeyOwner,
    rawKey: string,
    setBy: string
  ) => Effect.Effect<void, InvalidApiKeyError | SecretKeyMissingError | StoreError>
  /** Removes the owner's key; whether there was one. */
  readonly clearKey: (owner: KeyOwner) => Effect.Effect<boolean, StoreError>
  readonly getKey: (owner: KeyOwner) => Effect.Effect<StoredKey, StoreError>
  readonly setServerRouteOptOut: (userId: string, optOut: boolean) => Effect.Effect<void, StoreError>
  /** The user asked never to fall back to the server's key (`/key optout`); false when never set. */
  readonly serverRouteOptOut: (userId: string) => Effect.Effect<boolean, StoreError>
}

const STORE = "CredentialStore"

/** The AAD of a sealed key: it opens only in its own row. */
const keyContext = (owner: KeyOwner): string => `credential_keys/${owner.kind}/${owner.id}`

const KeyRow = Schema.Struct({ sealed_key: Schema.String, set_by: Schema.String, updated_at: DbBigInt })
const OptOutRow = Schema.Struct({ server_route_opt_out: DbFlag })

/** The database side, every method bounded by STORE_TIMEOUT_MS. */
const makeRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const put = Effect.fn("CredentialStore.put")(
    function* (owner: KeyOwner, sealed: string, setBy: string) {
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO credential_keys (owner_kind, owner_id, sealed_key, set_by, updated_at)
        VALUES (${owner.kind}, ${owner.id}, ${sealed}, ${setBy}, ${now})
        ON CONFLICT (owner_kind, owner_id) DO UPDATE SET
          sealed_key = excluded.sealed_key, set_by = excluded.set_by, updated_at = excluded.updated_at`
    },
    Effect.mapError(storeFailure(STORE, "setKey"))
  )

  const get = Effect.fn("CredentialStore.get")(
    function* (owner: KeyOwner) {
      const rows = yield* sql`SELECT sealed_key, set_by, updated_at FROM credential_keys
        WHERE owner_kind = ${owner.kind} AND owner_id = ${owner.id}`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(KeyRow))(rows)
      return Option.fromNullishOr(decoded[0])
    },
    Effect.mapError(storeFailure(STORE, "getKey"))
  )

  // Compare-and-set: a key set meanwhile is not overwritten by the re-sealed old one.
  const reseal = Effect.fn("CredentialStore.reseal")(
    function* (owner: KeyOwner, from: string, to: string) {
      yield* sql`UPDATE credential_keys SET sealed_key = ${to}
        WHERE owner_kind = ${owner.kind} AND owner_id = ${owner.id} AND sealed_key = ${from}`
    },
    Effect.mapError(storeFailure(STORE, "resealKey"))
  )

  const clear = Effect.fn("CredentialStore.clear")(
    function* (owner: KeyOwner) {
      const removed = yield* sql`DELETE FROM credential_keys
        WHERE owner_kind = ${owner.kind} AND owner_id = ${owner.id} RETURNING owner_id`
      return removed.length > 0
    },
    Effect.mapError(storeFailure(STORE, "clearKey"))
  )

  const setOptOut = Effect.fn("CredentialStore.setServerRouteOptOut")(
    function* (userId: string, optOut: boolean) {
      const now = yield* Clock.currentTimeMillis
      yield* sql`INSERT INTO credential_preferences (user_id, server_route_opt_out, updated_at)
        VALUES (${userId}, ${flagValue(optOut)}, ${now})
        ON CONFLICT (user_id) DO UPDATE SET
          server_route_opt_out = excluded.server_route_opt_out, updated_at = excluded.updated_at`
    },
    Effect.mapError(storeFailure(STORE, "setServerRouteOptOut"))
  )

  const optOut = Effect.fn("CredentialStore.serverRouteOptOut")(
    function* (userId: string) {
      const rows = yield* sql`SELECT server_route_opt_out FROM credential_preferences WHERE user_id = ${userId}`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(OptOutRow))(rows)
      return decoded[0]?.server_route_opt_out ?? false
    },
    Effect.mapError(storeFailure(STORE, "serverRouteOptOut"))
  )

  // Keyed by the public method names: a timeout's log line names the call the caller made.
  return { setKey: put, getKey: get, resealKey: reseal, clearKey: clear, setServerRouteOptOut: setOptOut, serverRouteOptOut: optOut }
})

const make = Effect.gen(function* () {
  const rows = yield* boundedStore(STORE, makeRows)
  const box = yield* SecretBox

  const setKey = Effect.fn("CredentialStore.setKey")(function* (owner: KeyOwner, rawKey: string, setBy: string) {
    const key = yield* Effect.fromResult(validateApiKey(rawKey))
    const sealed = yield* box.seal(key, keyContext(owner)).pipe(
      Effect.tapError(() => Effect.logError(`refused to store a ${owner.kind === "user" ? "personal" : "server"} API key: LOOPCORD_SECRET_KEY is not set`))
    )
    yield* rows.setKey(owner, sealed, setBy)
  })

  const getKey = Effect.fn("CredentialStore.getKey")(function* (owner: KeyOwner) {
    const row = yield* rows.getKey(owner)
    if (Option.isNone(row)) return StoredKey.None()
    const { sealed_key: sealed, set_by: setBy, updated_at: updatedAt } = row.value
    const opened = yield* Effect.result(box.open(sealed, keyContext(owner)))
    if (opened._tag === "Failure") return StoredKey.Unusable({ reason: opened.failure.reason, setBy, updatedAt })
    if (Option.isSome(opened.success.resealed)) {
      // A failed re-seal only means the next read tries again: the key itself opened.
      yield* rows.resealKey(owner, sealed, opened.success.resealed.value).pipe(
        Effect.tap(() => Effect.logInfo(`re-sealed a stored ${owner.kind === "user" ? "personal" : "server"} API key under the current LOOPCORD_SECRET_KEY`)),
        Effect.catch((error) => Effect.logWarning(`could not re-seal a stored API key: ${error.message}`))
      )
    }
    return StoredKey.Usable({ key: opened.success.plain, setBy, updatedAt })
  })

  return {
    setKey,
    getKey,
    clearKey: rows.clearKey,
    setServerRouteOptOut: rows.setServerRouteOptOut,
    serverRouteOptOut: rows.serverRouteOptOut
  } satisfies CredentialStoreShape
})

export class CredentialStore extends Context.Service<CredentialStore, CredentialStoreShape>()("loopcord/store/CredentialStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`) and the SecretBox. */
  static readonly layer: Layer.Layer<CredentialStore, never, SqlClient.SqlClient | SecretBox> = Layer.effect(this, make)
}
