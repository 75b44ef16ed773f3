import * as SqlClient from "effect/sql/SqlClient"
import { Clock, Context, Effect, Layer, Ref, Schema } from "effect"
import { CREDENTIAL_SOURCES, type CredentialSource } from "../domain/CredentialSource"
import { type TurnUsage, UsageLedger } from "../loop/UsageLedger"
import { DbBigInt, storeFailure } from "./columns"
import { admissionScope, dayOf } from "./ServerTurnAdmissionStore"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/**
 * The usage ledger: turns and tokens per server, user, UTC day and credential source, one row
 * per combination incremented by an atomic upsert (no count is lost between processes). It is
 * read for `MAX_USAGE_DAYS` and kept no longer: the first write of each UTC day drops the rows
 * that fell out of the window.
 */

/** One day's totals for one credential source. */
export interface UsageTotals {
  readonly day: number
  readonly source: CredentialSource
  readonly turns: number
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

/** Whose usage: one user's (everywhere) or one server's (every user). */
type UsageScope = { readonly userId: string } | { readonly guildId: string }

/** At most this many days are read back, and kept. */
export const MAX_USAGE_DAYS = 90

/** The oldest day still inside the window on `today`. */
const oldestKeptDay = (today: number): number => today - MAX_USAGE_DAYS + 1

interface UsageLedgerStoreShape {
  readonly record: (entry: TurnUsage) => Effect.Effect<void, StoreError>
  /** The last `days` UTC days (today included), newest first. */
  readonly totals: (scope: UsageScope, days: number) => Effect.Effect<ReadonlyArray<UsageTotals>, StoreError>
}

const STORE = "UsageLedgerStore"

const TotalsRow = Schema.Struct({
  day: DbBigInt,
  credential_source: Schema.Literals(CREDENTIAL_SOURCES),
  turns: DbBigInt,
  input_tokens: DbBigInt,
  output_tokens: DbBigInt,
  total_tokens: DbBigInt
})

const make = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The day this process last pruned (once a day is enough; another process pruning too is harmless).
  const prunedOn = yield* Ref.make(Number.NaN)

  const pruneOnce = (day: number) =>
    Effect.flatMap(Ref.getAndSet(prunedOn, day), (last) =>
      last === day ? Effect.void : sql`DELETE FROM usage_ledger WHERE day < ${oldestKeptDay(day)}`)

  const record = Effect.fn("UsageLedgerStore.record")(
    function* (entry: TurnUsage) {
      const day = dayOf(yield* Clock.currentTimeMillis)
      const usage = entry.usage
      yield* sql`INSERT INTO usage_ledger
          (scope_key, day, user_id, credential_source, turns, input_tokens, output_tokens, total_tokens)
        VALUES (${admissionScope(entry.guildId)}, ${day}, ${entry.userId}, ${entry.source}, 1,
          ${usage?.inputTokens ?? 0}, ${usage?.outputTokens ?? 0}, ${usage?.totalTokens ?? 0})
        ON CONFLICT (scope_key, day, user_id, credential_source) DO UPDATE SET
          turns = usage_ledger.turns + 1,
          input_tokens = usage_ledger.input_tokens + excluded.input_tokens,
          output_tokens = usage_ledger.output_tokens + excluded.output_tokens,
          total_tokens = usage_ledger.total_tokens + excluded.total_tokens`
      yield* pruneOnce(day)
    },
    Effect.mapError(storeFailure(STORE, "record"))
  )

  const totals = Effect.fn("UsageLedgerStore.totals")(
    function* (scope: UsageScope, days: number) {
      const since = dayOf(yield* Clock.currentTimeMillis) - Math.max(1, Math.min(MAX_USAGE_DAYS, Math.floor(days))) + 1
      const filter = "userId" in scope ? sql`user_id = ${scope.userId}` : sql`scope_key = ${scope.guildId}`
      const rows = yield* sql`SELECT day, credential_source, SUM(turns) AS turns, SUM(input_tokens) AS input_tokens,
          SUM(output_tokens) AS output_tokens, SUM(total_tokens) AS total_tokens
        FROM usage_ledger WHERE ${filter} AND day >= ${since}
        GROUP BY day, credential_source ORDER BY day DESC, credential_source`
      const decoded = yield* Schema.decodeUnknownEffect(Schema.Array(TotalsRow))(rows)
      return decoded.map((row): UsageTotals => ({
        day: row.day,
        source: row.credential_source,
        turns: row.turns,
        inputTokens: row.input_tokens,
        outputTokens: row.output_tokens,
        totalTokens: row.total_tokens
      }))
    },
    Effect.mapError(storeFailure(STORE, "totals"))
  )

  return { record, totals } satisfies UsageLedgerStoreShape
})

export class UsageLedgerStore extends Context.Service<UsageLedgerStore, UsageLedgerStoreShape>()("loopcord/store/UsageLedgerStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))

  /** The loop's `UsageLedger` over this store: a failed write is logged, never the turn's problem. */
  static readonly ledgerLayer: Layer.Layer<never, never, UsageLedgerStore> = Layer.effect(
    UsageLedger,
    Effect.map(UsageLedgerStore, (store) => ({
      record: (entry: TurnUsage) =>
        store.record(entry).pipe(Effect.catch((error) => Effect.logWarning(`could not record a turn's usage: ${error.message}`)))
    }))
  )
}
