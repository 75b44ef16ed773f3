import type * as SqlClient from "effect/sql/SqlClient"
import { type Config, Effect, Layer, Option } from "effect"
import type { ChannelQueue } from "../chat/ChannelQueue"
import { OpsConfig } from "../config/OpsConfig"
import type { DiscordClient } from "../discord/DiscordClient"
import { BOT_READINESS_PARTS, botReadinessLayer } from "./botReadiness"
import { gracefulDrainLayer } from "./Drain"
import { type HealthServerError, healthServerLayer } from "./HealthServer"
import { queueDepthLayer } from "./QueueDepth"
import { Readiness } from "./Readiness"
import { shardLeasesLayer } from "./ShardLeases"
import { ShardLeaseStore } from "../store/ShardLeaseStore"

/**
 * Operations of the Discord bot that come first (and so close last): its settings, the
 * readiness registry, and the health server when `HEALTH_PORT` is set, which answers /healthz
 * while the bot still logs in.
 */
export const discordOpsFoundation: Layer.Layer<OpsConfig | Readiness, Config.ConfigError | HealthServerError> = Layer.unwrap(
  Effect.map(OpsConfig, (settings) => {
    const readiness = Readiness.layer(BOT_READINESS_PARTS)
    return Option.match(settings.healthPort, {
      onNone: () => readiness,
      onSome: (port) => Layer.provideMerge(healthServerLayer({ host: settings.healthHost, port }), readiness)
    })
  })
).pipe(Layer.provideMerge(OpsConfig.layer))

/**
 * Operations that sit beside the bot, over its queue, client and database: the readiness checks,
 * the graceful drain, the queue-depth gauge, the shard leases (overlapping shard lists between
 * hosts are logged).
 */
export const discordOpsLayer: Layer.Layer<never, never, ChannelQueue | DiscordClient | SqlClient.SqlClient | OpsConfig | Readiness> =
  Layer.mergeAll(botReadinessLayer, gracefulDrainLayer, queueDepthLayer, shardLeasesLayer.pipe(Layer.provide(ShardLeaseStore.layer)))
