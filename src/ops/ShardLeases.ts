import { Duration, Effect, Layer, Ref, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import { hostname } from "node:os"
import { DiscordClient } from "../discord/DiscordClient"
import { type ShardLeaseConflict, ShardLeaseStore } from "../store/ShardLeaseStore"

/** How often this process renews its shard leases. */
const LEASE_HEARTBEAT = Duration.seconds(10)
/** A lease not renewed for this long belongs to a process that is gone. */
const LEASE_LIVES_FOR = Duration.seconds(35)

/** This process, as the lease table names it: the host, the pid, and a nonce (pids repeat across restarts). */
const leaseHolder = (): string => `${hostname()}#${process.pid}-${randomBytes(3).toString("hex")}`

const describeConflict = (conflict: ShardLeaseConflict, count: number) =>
  conflict.shardCount !== count
    ? `${conflict.holder} runs this bot with ${conflict.shardCount} shard(s) and this host with ${count}: every host needs the same DISCORD_SHARD_COUNT`
    : `shard ${conflict.shardId}/${count} is also run by ${conflict.holder} (seen ${Math.round(conflict.ageMs / 1000)} s ago): DISCORD_SHARD_IDS overlap between hosts, and each shard must run on one host only`

/**
 * Keeps this process's shard leases (the shards `assignment` names) renewed and reports, once
 * per shard and other holder, another live process running the same shard. Released when the
 * scope closes. A database that fails is reported once; the bot goes on without leases.
 */
export const keepShardLeases = (assignment: { readonly ids: ReadonlyArray<number>; readonly count: number }, holder: string = leaseHolder()) =>
  Effect.gen(function*() {
    const store = yield* ShardLeaseStore
    const reported = yield* Ref.make<ReadonlySet<string>>(new Set())
    const failing = yield* Ref.make(false)
    const liveForMs = Duration.toMillis(LEASE_LIVES_FOR)

    const renew = store.renew(holder, assignment.ids, assignment.count, liveForMs).pipe(
      Effect.tap(() => Ref.set(failing, false)),
      Effect.flatMap((conflicts) =>
        Effect.gen(function*() {
          const keys = conflicts.map((conflict) => `${conflict.shardId}/${conflict.shardCount}@${conflict.holder}`)
          const fresh = yield* Ref.modify(reported, (seen): [ReadonlyArray<ShardLeaseConflict>, ReadonlySet<string>] => [
            conflicts.filter((_, index) => !seen.has(keys[index] ?? "")),
            new Set(keys)
          ])
          for (const conflict of fresh) yield* Effect.logError(`Discord sharding: ${describeConflict(conflict, assignment.count)}`)
        })),
      Effect.catch((error) =>
        Effect.flatMap(Ref.getAndSet(failing, true), (was) =>
          was ? Effect.void : Effect.logWarning(`Discord sharding: shard leases not renewed (${error.message}); overlaps between hosts go unnoticed meanwhile`)))
    )

    // Released after the heartbeat stopped (finalizers run last-in first-out).
    yield* Effect.addFinalizer(() => Effect.ignore(store.release(holder)))
    yield* Effect.forkScoped(Effect.repeat(renew, Schedule.spaced(LEASE_HEARTBEAT)))
    return holder
  })

/** The Discord bot's leases: the shards its client runs, out of the bot's shard count. */
export const shardLeasesLayer: Layer.Layer<never, never, DiscordClient | ShardLeaseStore> = Layer.effectDiscard(
  Effect.gen(function*() {
    const client = yield* DiscordClient
    const ids = [...client.ws.shards.keys()].sort((a, b) => a - b)
    const count = typeof client.options.shardCount === "number" ? client.options.shardCount : ids.length
    yield* keepShardLeases({ ids, count })
  })
)
