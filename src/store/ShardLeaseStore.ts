import * as SqlClient from "effect/sql/SqlClient"
import { Array as Arr, Clock, Context, Effect, Layer, Schema } from "effect"
import { DbBigInt, storeFailure } from "./columns"
import type { StoreError } from "./StoreError"
import { boundedStore } from "./StoreTimeout"

/** Another live holder of a shard this process runs (or of the same bot with another shard count). */
export interface ShardLeaseConflict {
  readonly shardId: number
  readonly shardCount: number
  readonly holder: string
  /** How long ago the other holder renewed its lease (ms). */
  readonly ageMs: number
}

interface ShardLeaseStoreShape {
  /**
   * Renews `holder`'s leases of `ids` (out of `count` shards) and returns the leases other holders
   * renewed within `liveForMs`: the same shards (overlapping shard lists), or any shard under a
   * different shard count (hosts that disagree on DISCORD_SHARD_COUNT).
   */
  readonly renew: (
    holder: string,
    ids: ReadonlyArray<number>,
    count: number,
    liveForMs: number
  ) => Effect.Effect<ReadonlyArray<ShardLeaseConflict>, StoreError>
  /** Gives up `holder`'s leases (a clean shutdown). */
  readonly release: (holder: string) => Effect.Effect<void, StoreError>
}

const STORE = "ShardLeaseStore"

const LeaseRow = Schema.Struct({
  shard_id: DbBigInt,
  shard_count: DbBigInt,
  holder: Schema.String,
  heartbeat_at: DbBigInt
})

const make: Effect.Effect<ShardLeaseStoreShape, never, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const renew = Effect.fn("ShardLeaseStore.renew")(
    function*(holder: string, ids: ReadonlyArray<number>, count: number, liveForMs: number) {
      if (!Arr.isReadonlyArrayNonEmpty(ids)) return []
      const now = yield* Clock.currentTimeMillis
      // Read the others first: a lease this renewal takes over is still reported.
      const rows = yield* sql`SELECT shard_id, shard_count, holder, heartbeat_at FROM discord_shard_leases
        WHERE holder <> ${holder} AND heartbeat_at > ${now - liveForMs}
          AND (shard_count <> ${count} OR ${sql.in("shard_id", ids)})`
      const others = yield* Schema.decodeUnknownEffect(Schema.Array(LeaseRow))(rows)
      yield* sql`INSERT INTO discord_shard_leases ${
        sql.insert(Arr.map(ids, (id) => ({ shard_id: id, shard_count: count, holder, heartbeat_at: now })))
      } ON CONFLICT (shard_id, shard_count) DO UPDATE SET holder = excluded.holder, heartbeat_at = excluded.heartbeat_at`
      return others.map((row): ShardLeaseConflict => ({
        shardId: row.shard_id,
        shardCount: row.shard_count,
        holder: row.holder,
        ageMs: Math.max(0, now - row.heartbeat_at)
      }))
    },
    Effect.mapError(storeFailure(STORE, "renew"))
  )

  const release = Effect.fn("ShardLeaseStore.release")(
    function*(holder: string) {
      yield* sql`DELETE FROM discord_shard_leases WHERE holder = ${holder}`
    },
    Effect.mapError(storeFailure(STORE, "release"))
  )

  return { renew, release }
})

/**
 * Who runs which Discord shard (`discord_shard_leases`, migration 3): hosts that split one bot's
 * shards renew a lease per shard with heartbeats, so two hosts given the same shard notice.
 */
export class ShardLeaseStore extends Context.Service<ShardLeaseStore, ShardLeaseStoreShape>()("loopcord/store/ShardLeaseStore") {
  /** Backed by the database (needs the migrated SqlClient of `Database.layer`). */
  static readonly layer = Layer.effect(this, boundedStore(STORE, make))
}
