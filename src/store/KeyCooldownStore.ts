import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Effect, Layer, Option, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { RoutePlan } from "../loop/RoutePlan"
import { SharedCooldownError, SharedKeyCooldowns, type SharedKeyCooldownsShape } from "../loop/SharedKeyCooldowns"
import { DbBigInt } from "./columns"

/** A key as the database knows it: its SHA-256, never the key. */
const keyFingerprint = (key: Redacted.Redacted<string>): string =>
  createHash("sha256").update(`loopcord-api-key:${Redacted.value(key)}`).digest("hex")

const Row = Schema.Struct({ key_fingerprint: Schema.String, resting_until: DbBigInt })

const failure = (operation: string) => (cause: { readonly message: string }) =>
  new SharedCooldownError({ detail: `${operation}: ${cause.message}` })

/**
 * The KeyPool's shared cooldowns in the `api_key_cooldowns` table (migration 3): the pool's keys
 * of RoutePlan, by fingerprint, so every host sees the same key under the same row whatever the
 * order of its LLM_API_KEYS. Rests that ended are dropped whenever a new one is written.
 */
export const make: Effect.Effect<SharedKeyCooldownsShape, never, SqlClient.SqlClient | RoutePlan> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const fingerprints = (yield* RoutePlan).keys.map(keyFingerprint)
  const indexOf = new Map(fingerprints.map((fingerprint, index) => [fingerprint, index]))

  const resting = Effect.gen(function*() {
    if (fingerprints.length === 0) return new Map<number, number>()
    const now = yield* Clock.currentTimeMillis
    const rows = yield* sql`SELECT key_fingerprint, resting_until FROM api_key_cooldowns
      WHERE resting_until > ${now} AND ${sql.in("key_fingerprint", fingerprints)}`
    const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(Row))(rows)
    const rests = new Map<number, number>()
    for (const row of decoded) {
      const index = indexOf.get(row.key_fingerprint)
      if (index !== undefined) rests.set(index, row.resting_until)
    }
    return rests as ReadonlyMap<number, number>
  }).pipe(Effect.mapError(failure("read")))

  const rest = (index: number, until: number) =>
    Effect.gen(function*() {
      const fingerprint = fingerprints[index]
      if (fingerprint === undefined) return
      const now = yield* Clock.currentTimeMillis
      // A longer rest another host recorded stays.
      yield* sql`INSERT INTO api_key_cooldowns (key_fingerprint, resting_until, updated_at)
        VALUES (${fingerprint}, ${until}, ${now})
        ON CONFLICT (key_fingerprint) DO UPDATE SET
          resting_until = CASE WHEN excluded.resting_until > api_key_cooldowns.resting_until
            THEN excluded.resting_until ELSE api_key_cooldowns.resting_until END,
          updated_at = excluded.updated_at`
      yield* sql`DELETE FROM api_key_cooldowns WHERE resting_until <= ${now}`
    }).pipe(Effect.mapError(failure("write")))

  const clear = (index: number) =>
    Option.match(Option.fromNullishOr(fingerprints[index]), {
      onNone: () => Effect.void,
      onSome: (fingerprint) => Effect.asVoid(sql`DELETE FROM api_key_cooldowns WHERE key_fingerprint = ${fingerprint}`)
    }).pipe(Effect.mapError(failure("clear")))

  return { resting, rest, clear }
})

/** SharedKeyCooldowns over the database (needs the migrated SqlClient of `Database.layer`). */
export const layer: Layer.Layer<never, never, SqlClient.SqlClient | RoutePlan> = Layer.effect(
  SharedKeyCooldowns,
  Effect.map(make, Option.some)
)
