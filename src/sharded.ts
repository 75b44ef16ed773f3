/**
 * `npm run start:sharded`: the Discord bot across several processes with discord.js's
 * ShardingManager; every shard runs `src/main.ts` (the normal entry) for its own shards.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer } from "effect"
import { fileURLToPath } from "node:url"
import { DiscordConfig } from "./config/DiscordConfig"
import { dotenvLayer } from "./config/dotenv"
import { loggingLayer } from "./config/LoggingConfig"
import { describeFailure } from "./config/startupError"
import { runShards } from "./discord/Sharding"

const entry = fileURLToPath(new URL("./main.ts", import.meta.url))

const program = runShards({ entry }).pipe(
  Effect.zipRight(Effect.never),
  Effect.scoped,
  Effect.provide(Layer.merge(DiscordConfig.layer, loggingLayer("info"))),
  // ./.env as for `npm start` (the shard processes read it themselves).
  Effect.provide(dotenvLayer().pipe(Layer.provide(NodeFileSystem.layer))),
  Effect.tapErrorCause((cause) => Effect.logError(`loopcord (sharded): ${describeFailure(cause)}`))
)

NodeRuntime.runMain(program, { disableErrorReporting: true })
