import * as SqlClient from "effect/sql/SqlClient"
import { Status } from "discord.js"
import { Effect, Layer } from "effect"
import { DiscordClient } from "../discord/DiscordClient"
import { Readiness, type ReadinessCheck } from "./Readiness"

/** The parts `/readyz` waits for in the Discord bot. */
export const BOT_READINESS_PARTS = ["discord", "database", "startup"] as const

/** Every gateway shard of the client is connected and identified (not resuming, reconnecting or idle). */
const gatewayCheck = (client: DiscordClient["Service"]): ReadinessCheck =>
  Effect.suspend(() => {
    const shards = [...client.ws.shards.values()]
    if (shards.length === 0) return Effect.fail("no gateway shard")
    const down = shards.filter((shard) => shard.status !== Status.Ready)
    return down.length === 0
      ? Effect.void
      : Effect.fail(down.map((shard) => `shard ${shard.id} ${Status[shard.status]?.toLowerCase() ?? "down"}`).join(", "))
  })

/** The database answers a trivial query. */
const databaseCheck = (sql: SqlClient.SqlClient): ReadinessCheck =>
  sql`SELECT 1`.pipe(Effect.asVoid, Effect.mapError((error) => `database: ${error.message.slice(0, 200)}`))

/** Registers the gateway and database checks once both exist. */
export const botReadinessLayer: Layer.Layer<never, never, Readiness | DiscordClient | SqlClient.SqlClient> = Layer.effectDiscard(
  Effect.gen(function*() {
    const readiness = yield* Readiness
    yield* readiness.register("discord", gatewayCheck(yield* DiscordClient))
    yield* readiness.register("database", databaseCheck(yield* SqlClient.SqlClient))
  })
)

/** The last step of start-up: everything else is built (global MCP settled, commands registered). */
export const markStarted: Effect.Effect<void, never, Readiness> = Effect.flatMap(Readiness, (readiness) =>
  readiness.register("startup", Effect.void))
