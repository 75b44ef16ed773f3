import { type APIGatewayBotInfo, REST, Routes, ShardingManager } from "discord.js"
import { Duration, Effect, FiberSet, Redacted } from "effect"
import { DiscordConfig } from "../config/DiscordConfig"
import { DiscordStartupError } from "./DiscordClient"

export interface ShardingOptions {
  /** The entry every shard process runs (`dist/main.js`, or `src/main.ts` under tsx): it logs a client into its shards. */
  readonly entry: string
  /** Shards to run; default: what Discord recommends for the bot (`GET /gateway/bot`). */
  readonly totalShards?: number
  /**
   * Pause between shard starts. Discord lets a bot identify once per 5 s per concurrency
   * bucket, which is discord.js's default (5.5 s).
   */
  readonly spawnDelay?: Duration.DurationInput
  /** Node flags of the shard processes; default: tsx for a `.ts` entry, none for compiled JavaScript. */
  readonly execArgv?: ReadonlyArray<string>
}

/** Shard processes of a TypeScript entry load it through tsx; compiled JavaScript needs no flags. */
export const shardExecArgv = (entry: string): ReadonlyArray<string> => (/\.[cm]?ts$/.test(entry) ? ["--import", "tsx"] : [])

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

/**
 * Scale-out: a discord.js ShardingManager runs `entry` once per shard, each in its own process
 * (discord.js hands every process its shard ids through the environment). Shared state lives in
 * the database (DATABASE_URL must then point at PostgreSQL or one SQLite file); a guild's
 * messages, and so its channel queues, always land on the same shard. Runs until interrupted,
 * then stops every shard process.
 */
export const runShards = (options: ShardingOptions) =>
  Effect.gen(function*() {
    const config = yield* DiscordConfig
    const totalShards = options.totalShards ?? (yield* recommendedShards)
    const manager = new ShardingManager(options.entry, {
      token: Redacted.value(config.token),
      totalShards,
      mode: "process",
      respawn: true,
      execArgv: [...(options.execArgv ?? shardExecArgv(options.entry))]
    })
    const run = yield* FiberSet.makeRuntime<never>()
    manager.on("shardCreate", (shard) => {
      run(Effect.logInfo(`Discord sharding: shard ${shard.id + 1}/${totalShards} started`))
      shard.on("death", () => {
        run(Effect.logWarning(`Discord sharding: shard ${shard.id} exited; discord.js respawns it`))
      })
    })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          manager.spawn({
            amount: totalShards,
            delay: Duration.toMillis(Duration.decode(options.spawnDelay ?? Duration.millis(5500))),
            timeout: 60_000
          }),
        catch: (error) => new DiscordStartupError({ reason: "connection", detail: `a shard failed to start: ${error instanceof Error ? error.message : String(error)}` })
      }),
      () =>
        Effect.sync(() => {
          manager.respawn = false
          for (const shard of manager.shards.values()) shard.kill()
        })
    )
    yield* Effect.logInfo(`Discord sharding: ${totalShards} shard(s) running`)
    return manager
  })
