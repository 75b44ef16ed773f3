import { type APIGatewayBotInfo, REST, Routes, type Shard, ShardingManager } from "discord.js"
import { Duration, Effect, FiberSet, Queue, Redacted, Ref } from "effect"
import { DiscordConfig } from "../config/DiscordConfig"
import { DiscordStartupError } from "./DiscordClient"
import { NODE_MEMORY_FLAGS } from "./nodeMemoryFlags"
import { decodeBudgetMessage, HOST_BUDGET_ENV, HOST_BUDGET_IPC, hostBudgetServer } from "./hostBudget"
import { hostShare, localSlotSource, makeRequestBudget } from "./RequestBudget"

interface ShardingOptions {
  /** The entry every shard process runs (`dist/main.js`, or `src/main.ts` under tsx): it logs a client into its shards. */
  readonly entry: string
  /** Shards to run; default: what Discord recommends for the bot (`GET /gateway/bot`). */
  readonly totalShards?: number
  /**
   * Pause between shard starts. Discord lets a bot identify once per 5 s per concurrency
   * bucket, which is discord.js's default (5.5 s).
   */
  readonly spawnDelay?: Duration.Input
  /** Node flags of the shard processes; default: the memory flags, and tsx for a `.ts` entry. */
  readonly execArgv?: ReadonlyArray<string>
  /** How long a shard process may take to become ready (60 s). */
  readonly readyTimeout?: Duration.Input
  /**
   * A shard that exited is started again after `initial` (5 s, one identify window); each
   * failed start doubles the pause, up to `max` (5 min). It is tried until it runs.
   */
  readonly respawnBackoff?: { readonly initial?: Duration.Input; readonly max?: Duration.Input }
}

/** Shard processes run with the bot's memory flags; a TypeScript entry is loaded through tsx. */
export const shardExecArgv = (entry: string): ReadonlyArray<string> => [...NODE_MEMORY_FLAGS, ...(/\.[cm]?ts$/.test(entry) ? ["--import", "tsx"] : [])]

/** How many shards Discord recommends, asked at `DISCORD_API_BASE_URL` (discord.js's own helper always asks discord.com). */
export const recommendedShards = Effect.gen(function*() {
  const config = yield* DiscordConfig
  const rest = new REST(config.apiBaseUrl === undefined ? {} : { api: config.apiBaseUrl }).setToken(Redacted.value(config.token))
  const info = yield* Effect.tryPromise({
    try: () => rest.get(Routes.gatewayBot()) as Promise<APIGatewayBotInfo>,
    catch: (error) => {
      const detail = error instanceof Error ? error.message : String(error)
      const status = typeof error === "object" && error !== null && "status" in error ? error.status : undefined
      return new DiscordStartupError({ reason: status === 401 ? "invalid_token" : "connection", detail })
    }
  })
  return Math.max(1, info.shards)
})

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Scale-out: a discord.js ShardingManager runs `entry` once per shard, each in its own process
 * (discord.js hands every process its shard ids through the environment). Shared state lives in
 * the database (DATABASE_URL must then point at PostgreSQL or one SQLite file); a guild's
 * messages, and so its channel queues, always land on the same shard. Runs until interrupted,
 * then stops every shard process.
 *
 * Respawning is ours, not discord.js's (whose failed respawn emits an `error` nobody handles,
 * which ends the manager): a shard process that exits is started again with backoff, every
 * failed start is logged, and the manager keeps running whatever its shards do.
 */
export const runShards = (options: ShardingOptions) =>
  Effect.gen(function*() {
    const config = yield* DiscordConfig
    // DISCORD_SHARD_IDS / DISCORD_SHARD_COUNT: this host runs its share of the bot's shards.
    const totalShards = options.totalShards ?? config.shards?.count ?? (yield* recommendedShards)
    const readyTimeout = Duration.toMillis(Duration.fromInputUnsafe(options.readyTimeout ?? Duration.seconds(60)))
    const initialBackoff = Duration.toMillis(Duration.fromInputUnsafe(options.respawnBackoff?.initial ?? Duration.seconds(5)))
    const maxBackoff = Duration.toMillis(Duration.fromInputUnsafe(options.respawnBackoff?.max ?? Duration.minutes(5)))
    const manager = new ShardingManager(options.entry, {
      token: Redacted.value(config.token),
      totalShards,
      ...(config.shards === undefined ? {} : { shardList: [...config.shards.ids] }),
      mode: "process",
      respawn: false,
      execArgv: [...(options.execArgv ?? shardExecArgv(options.entry))]
    })
    const stopping = yield* Ref.make(false)
    const run = yield* FiberSet.makeRuntime<never>()
    // One request budget for every shard process of this host (Discord's global limit is per
    // bot token): the processes take their slots from here over IPC.
    const perSecond = hostShare(config.globalRequestsPerSecond, config.shards)
    const hostSource = yield* localSlotSource(perSecond)
    const budget = yield* hostBudgetServer(yield* makeRequestBudget(hostSource, perSecond), hostSource.pauseUntil)

    /** Starts `shard` again until it runs: each failure is logged, the pause doubles up to the maximum. */
    const restart = (shard: Shard): Effect.Effect<void> =>
      Effect.gen(function*() {
        for (let attempt = 0; ; attempt++) {
          const pause = Math.min(maxBackoff, initialBackoff * 2 ** attempt)
          yield* Effect.sleep(Duration.millis(pause))
          if (yield* Ref.get(stopping)) return
          const started = yield* Effect.result(Effect.tryPromise({
            // A process that hangs before ready is still there: respawn kills it first.
            try: () => (shard.process === null ? shard.spawn(readyTimeout) : shard.respawn({ delay: 0, timeout: readyTimeout })),
            catch: describe
          }))
          if (started._tag === "Success") {
            return yield* Effect.logInfo(`Discord sharding: shard ${shard.id} is running again (attempt ${attempt + 1})`)
          }
          const next = Math.min(maxBackoff, initialBackoff * 2 ** (attempt + 1))
          yield* Effect.logError(`Discord sharding: shard ${shard.id} failed to start (${started.failure}); trying again in ${Duration.format(Duration.millis(next))}`)
        }
      }).pipe(Effect.annotateLogs({ shardId: shard.id }))

    /**
     * Watches one shard: a death of the process that last became ready starts `restart`
     * (deaths of processes that never got ready belong to a restart already under way).
     */
    const supervise = (shard: Shard) =>
      Effect.gen(function*() {
        const deaths = yield* Queue.unbounded<unknown>()
        const healthy = yield* Ref.make<unknown>(undefined)
        shard.on("ready", () => run(Ref.set(healthy, shard.process)))
        // A dead process's slots and waits are given back to the host's budget.
        shard.on("death", (child: unknown) => run(Effect.andThen(budget.forget(shard.id), Queue.offer(deaths, child))))
        shard.on("message", (raw: unknown) => {
          const message = decodeBudgetMessage(raw)
          if (message !== undefined) {
            run(budget.serve(shard.id, message, (answer) => {
              // A process that just died cannot be answered; its slots are forgotten with it.
              shard.send(answer).catch(() => undefined)
            }))
          }
        })
        // discord.js emits errors of its own respawn path here; ours never reach it, but an
        // unheard `error` event would end the process.
        shard.on("error", (error: unknown) => run(Effect.logError(`Discord sharding: shard ${shard.id}: ${describe(error)}`)))
        for (;;) {
          const child = yield* Queue.take(deaths)
          if ((yield* Ref.get(stopping)) || child !== (yield* Ref.get(healthy))) continue
          yield* Effect.logWarning(`Discord sharding: shard ${shard.id} exited; starting it again`)
          yield* restart(shard)
        }
      })

    manager.on("shardCreate", (shard) => {
      // The manager hands each process its shards (SHARDS); the host's list is not the process's.
      if (typeof shard.env === "object" && shard.env !== null) {
        Reflect.deleteProperty(shard.env, "DISCORD_SHARD_IDS")
        Reflect.deleteProperty(shard.env, "DISCORD_SHARD_COUNT")
        Reflect.set(shard.env, HOST_BUDGET_ENV, HOST_BUDGET_IPC)
      }
      run(Effect.logInfo(`Discord sharding: shard ${shard.id + 1}/${totalShards} started`))
      run(supervise(shard))
    })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          manager.spawn({
            amount: totalShards,
            delay: Duration.toMillis(Duration.fromInputUnsafe(options.spawnDelay ?? Duration.millis(5500))),
            timeout: readyTimeout
          }),
        catch: (error) => new DiscordStartupError({ reason: "connection", detail: `a shard failed to start: ${describe(error)}` })
      }),
      () =>
        Effect.andThen(
          Ref.set(stopping, true),
          Effect.sync(() => {
            for (const shard of manager.shards.values()) if (shard.process !== null) shard.kill()
          })
        )
    )
    yield* Effect.logInfo(`Discord sharding: ${totalShards} shard(s) running, sharing ${perSecond} REST requests per second`)
    return manager
  })
