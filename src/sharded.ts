/**
 * `npm run start:sharded`: the Discord bot across several processes with discord.js's
 * ShardingManager; every shard runs the normal entry for its own shards: `dist/main.js` when
 * this runs compiled (`npm run start:sharded`), `src/main.ts` under tsx.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Effect, Layer, Logger } from "effect"
import { fileURLToPath } from "node:url"
import { DiscordConfig } from "./config/DiscordConfig"
import { dotenvLayer } from "./config/dotenv"
import { loggingLayer } from "./config/LoggingConfig"
import { describeFailure } from "./config/startupError"
import { runShards } from "./discord/Sharding"

const entry = fileURLToPath(new URL(import.meta.url.endsWith(".ts") ? "./main.ts" : "./main.js", import.meta.url))

const program = runShards({ entry }).pipe(
  Effect.andThen(Effect.never),
  Effect.scoped,
  Effect.provide(Layer.merge(DiscordConfig.layer, loggingLayer("info"))),
  // ./.env as for `npm start` (the shard processes read it themselves).
  Effect.provide(dotenvLayer().pipe(Layer.provide(NodeFileSystem.layer))),
  Effect.tapCause((cause) => Effect.logError(`loopcord (sharded): ${describeFailure(cause)}`)),
  // The failure line is logged before (or without) the configured logging: as logfmt on stdout.
  Effect.provide(Logger.layer([Logger.consoleLogFmt]))
)

NodeRuntime.runMain(program, { disableErrorReporting: true })
