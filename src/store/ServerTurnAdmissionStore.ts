import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Data, Effect, Layer, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { CredentialConfig } from "../config/CredentialConfig"
import { Admission, type AdmissionRefusal, type AdmissionRequest, ServerAdmission } from "../loop/ServerAdmission"
import { DbBigInt, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * Admissions of server-paid turns, in the database so every shard and host shares them: one row
 * per admitted turn (reserved while it runs, committed when it produced something, deleted when
 * it failed altogether). The cooldown is measured from the user's latest admission in the server;
 * the quotas count the rows of the UTC day. Admission is one transaction that holds the server's
 * write lock (an advisory lock on PostgreSQL, SQLite's write lock taken by the first statement),
 * so two processes can never both take the last unit.
 */

/** DMs have no server: they share this scope (their quotas count all DMs together). */
const DM_SCOPE = "dm"

export const DAY_MS = 86_400_000

/** The UTC day number of an epoch-millis instant. */
export const dayOf = (millis: number): number => Math.floor(millis / DAY_MS)

export const admissionScope = (guildId: string | undefined): string => guildId ?? DM_SCOPE

export interface AdmissionLimits {
  /** 0 = no cooldown. */
  readonly cooldownMs: number
  /** 0 = unlimited. */
  readonly serverDailyQuota: number
  readonly userDailyQuota: number
}

const limitsOff = (limits: AdmissionLimits): boolean =>
  limits.cooldownMs <= 0 && limits.serverDailyQuota <= 0 && limits.userDailyQuota <= 0

export type AdmissionRow = Data.TaggedEnum<{
  Reserved: { readonly admissionId: string }
  Refused: { readonly reason: AdmissionRefusal; readonly retryAfterMs: number | undefined }
}>
export const AdmissionRow = Data.taggedEnum<AdmissionRow>()

/** Server-paid turns of today (UTC) that count: running or committed. */
interface AdmissionCounts {
  readonly serverTurns: number
  readonly userTurns: number
}

interface ServerTurnAdmissionStoreShape {
  /** Checks the cooldown, then the server quota, then the user quota, and reserves a unit; atomic. */
  readonly admit: (request: AdmissionRequest, limits: AdmissionLimits) => Effect.Effect<AdmissionRow, StoreError>
  readonly commit: (admissionId: string) => Effect.Effect<void, StoreError>
  /** Gives the unit back and lifts the cooldown this admission started. */
  readonly release: (admissionId: string) => Effect.Effect<void, StoreError>
  readonly todayCounts: (request: AdmissionRequest) => Effect.Effect<AdmissionCounts, StoreError>
}

const STORE = "ServerTurnAdmissionStore"

const LastRow = Schema.Struct({ last: Schema.NullOr(DbBigInt) })
const CountRow = Schema.Struct({ n: DbBigInt })

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const lockScope = (scope: string) =>
    sql.onDialectOrElse({
      pg: () => sql`SELECT pg_advisory_xact_lock(hashtext(${`loopcord/server_turn_admissions/${scope}`}))`,
      orElse: () => Effect.succeed([])
    })

  const count = (rows: ReadonlyArray<unknown>) =>
    Effect.map(Schema.decodeUnknownEffect(Schema.Array(CountRow))(rows), (decoded) => decoded[0]?.n ?? 0)

  const admit = Effect.fn("ServerTurnAdmissionStore.admit")(
    function* (request: AdmissionRequest, limits: AdmissionLimits) {
      const now = yield* Clock.currentTimeMillis
      const today = dayOf(now)
      const scope = admissionScope(request.guildId)
      const cooldownMs = Math.max(0, limits.cooldownMs)
      return yield* sql.withTransaction(
        Effect.gen(function* () {
          yield* lockScope(scope)
          // The first statement writes, so on SQLite this transaction holds the write lock from here on.
          yield* sql`DELETE FROM server_turn_admissions
            WHERE scope_key = ${scope} AND day < ${today} AND admitted_at < ${now - cooldownMs}`
          if (cooldownMs > 0) {
            const rows = yield* sql`SELECT MAX(admitted_at) AS last FROM server_turn_admissions
              WHERE scope_key = ${scope} AND user_id = ${request.userId}`
            const last = (yield* Schema.decodeUnknownEffect(Schema.Array(LastRow))(rows))[0]?.last ?? null
            if (last !== null && now - last < cooldownMs) {
              return AdmissionRow.Refused({ reason: "cooldown", retryAfterMs: last + cooldownMs - now })
            }
          }
          if (limits.serverDailyQuota > 0) {
            const used = yield* count(yield* sql`SELECT COUNT(*) AS n FROM server_turn_admissions
              WHERE scope_key = ${scope} AND day = ${today}`)
            if (used >= limits.serverDailyQuota) return AdmissionRow.Refused({ reason: "server_quota", retryAfterMs: undefined })
          }
          if (limits.userDailyQuota > 0) {
            const used = yield* count(yield* sql`SELECT COUNT(*) AS n FROM server_turn_admissions
              WHERE scope_key = ${scope} AND day = ${today} AND user_id = ${request.userId}`)
            if (used >= limits.userDailyQuota) return AdmissionRow.Refused({ reason: "user_quota", retryAfterMs: undefined })
          }
          const admissionId = randomUUID()
          yield* sql`INSERT INTO server_turn_admissions (admission_id, scope_key, user_id, day, admitted_at, state)
            VALUES (${admissionId}, ${scope}, ${request.userId}, ${today}, ${now}, 'reserved')`
          return AdmissionRow.Reserved({ admissionId })
        })
      )
    },
    Effect.mapError(storeFailure(STORE, "admit"))
  )

  const commit = Effect.fn("ServerTurnAdmissionStore.commit")(
    function* (admissionId: string) {
      yield* sql`UPDATE server_turn_admissions SET state = 'committed' WHERE admission_id = ${admissionId}`
    },
    Effect.mapError(storeFailure(STORE, "commit"))
  )

  const release = Effect.fn("ServerTurnAdmissionStore.release")(
    function* (admissionId: string) {
      yield* sql`DELETE FROM server_turn_admissions WHERE admission_id = ${admissionId}`
    },
    Effect.mapError(storeFailure(STORE, "release"))
  )

  const todayCounts = Effect.fn("ServerTurnAdmissionStore.todayCounts")(
    function* (request: AdmissionRequest) {
      const today = dayOf(yield* Clock.currentTimeMillis)
      const scope = admissionScope(request.guildId)
      const serverTurns = yield* count(yield* sql`SELECT COUNT(*) AS n FROM server_turn_admissions
        WHERE scope_key = ${scope} AND day = ${today}`)
      const userTurns = yield* count(yield* sql`SELECT COUNT(*) AS n FROM server_turn_admissions
        WHERE scope_key = ${scope} AND day = ${today} AND user_id = ${request.userId}`)
      return { serverTurns, userTurns }
    },
    Effect.mapError(storeFailure(STORE, "todayCounts"))
  )

  return { admit, commit, release, todayCounts } satisfies ServerTurnAdmissionStoreShape
})

export class ServerTurnAdmissionStore extends Context.Service<
  ServerTurnAdmissionStore,
  ServerTurnAdmissionStoreShape
>()("loopcord/store/ServerTurnAdmissionStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))

  /**
   * The loop's `ServerAdmission` over this store and the configured limits. With every limit off
   * the database is not asked. A database that cannot answer admits the turn (logged as an error):
   * quotas protect a budget, they do not take the bot down with the database.
   */
  static readonly admissionLayer: Layer.Layer<never, never, ServerTurnAdmissionStore | CredentialConfig> = Layer.effect(
    ServerAdmission,
    Effect.gen(function* () {
      const store = yield* ServerTurnAdmissionStore
      const settings = yield* CredentialConfig
      const limits: AdmissionLimits = {
        cooldownMs: settings.serverMessageCooldownMs,
        serverDailyQuota: settings.serverDailyTurnQuota,
        userDailyQuota: settings.userDailyTurnQuota
      }
      const unlimited = Admission.Admitted({ settle: () => Effect.void })
      const settleWith = (admissionId: string) => (outcome: "commit" | "release") =>
        (outcome === "commit" ? store.commit(admissionId) : store.release(admissionId)).pipe(
          Effect.catch((error) => Effect.logError(`could not ${outcome} a server-paid turn's admission: ${error.message}`))
        )
      return {
        admit: (request: AdmissionRequest) =>
          limitsOff(limits)
            ? Effect.succeed(unlimited)
            : store.admit(request, limits).pipe(
              Effect.map(AdmissionRow.$match({
                Reserved: ({ admissionId }) => Admission.Admitted({ settle: settleWith(admissionId) }),
                Refused: ({ reason, retryAfterMs }) => Admission.Refused({ reason, retryAfterMs })
              })),
              Effect.catch((error) =>
                Effect.as(Effect.logError(`server-turn admission unavailable, the turn is admitted: ${error.message}`), unlimited)
              )
            )
      }
    })
  )
}
