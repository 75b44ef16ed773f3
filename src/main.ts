/**
 * The composition root and the only place that runs effects (design §4). Picks the front
 * (Discord when DISCORD_TOKEN is set, else the terminal; `--once` always the terminal), the
 * provider from LLM_PROVIDER, and wires the chat pipeline:
 *   front ─► ChannelQueue ─► TurnRunner ─► runGenerationTurn ─► runToolLoop ─► LanguageModel
 * Any start-up failure prints one line on stderr (naming the variable for a bad setting).
 */
import { NodeFileSystem, NodeHttpClient, NodeRuntime } from "@effect/platform-node"
import { Cause, Config, type ConfigError, Effect, Either, Exit, Layer, Option } from "effect"
import { ChannelQueue } from "./chat/ChannelQueue"
import { TurnRunner } from "./chat/TurnRunner"
import { loggingLayer } from "./config/LoggingConfig"
import { LoopConfig } from "./config/LoopConfig"
import { personaSetting } from "./config/PersonaConfig"
import { ProviderConfig, type ProviderKind, providerSettings, routePlanLayer } from "./config/ProviderConfig"
import { runEnvSetting } from "./config/RunEnv"
import { describeFailure, StartupError } from "./config/startupError"
import { KeyPool } from "./loop/KeyPool"
import { PendingContextStash } from "./loop/PendingContextStash"
import { ThoughtLog } from "./loop/ThoughtLog"
import { layerConfigFor } from "./provider/httpProviders"
import type { LanguageModel } from "./provider/LanguageModel"
import * as Scripted from "./provider/scripted/ScriptedModel"
import { parseCliArgs, USAGE } from "./terminal/cliArgs"
import { runInteractive, runOnce } from "./terminal/TerminalFront"
import { TerminalOutput } from "./terminal/TerminalOutput"
import { GuildToolSource } from "./tools/GuildToolSource"
import * as InMemoryToolAffordances from "./tools/InMemoryToolAffordances"
import { StickerCatalog } from "./tools/StickerCatalog"
import type { Tool } from "./tools/Tool"
import { registerAll, ToolRegistry } from "./tools/ToolRegistry"
import { ToolUsageStats } from "./tools/ToolUsageStats"

/** The model for LLM_PROVIDER; HTTP providers talk through undici. */
const providerLayer = (kind: ProviderKind): Layer.Layer<LanguageModel, ConfigError.ConfigError> =>
  kind === "scripted"
    ? Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer))
    : layerConfigFor(kind).pipe(Layer.provide(NodeHttpClient.layerUndici))

/**
 * Built-in tools registered at start-up. INTEGRATION POINT (lead): add the built-ins of
 * src/tools/builtin/*, web tools and global MCP tools here; the terminal works with none.
 */
const builtinTools: ReadonlyArray<Tool> = []

const toolRegistryLayer = Layer.effect(
  ToolRegistry,
  Effect.gen(function*() {
    const registry = yield* Effect.provide(ToolRegistry, ToolRegistry.layer)
    yield* Effect.orDie(registerAll(registry, builtinTools))
    return registry
  })
).pipe(Layer.provide(GuildToolSource.none))

/** Everything a turn needs besides its per-turn context (sink, signals, turn facts). */
const turnServices = (kind: ProviderKind) =>
  Layer.mergeAll(
    providerLayer(kind),
    toolRegistryLayer,
    ThoughtLog.logged,
    LoopConfig.layer,
    InMemoryToolAffordances.layer,
    StickerCatalog.none,
    ToolUsageStats.none,
    PendingContextStash.Default,
    routePlanLayer.pipe(Layer.provide(ProviderConfig.layer)),
    KeyPool.Default
  )

const chatLayer = (kind: ProviderKind) =>
  ChannelQueue.Default.pipe(Layer.provide(TurnRunner.Default), Layer.provide(turnServices(kind)))

/**
 * The Discord front (DISCORD_TOKEN set, no `--once`). INTEGRATION POINT (lead): launch
 * `DiscordBot.layer` (src/discord/DiscordBot.ts) on `DiscordServices` and `chatLayer(kind)`,
 * with the Discord ThoughtLog / StickerCatalog replacing the defaults in `turnServices`.
 */
const discordFront = (_kind: ProviderKind): Effect.Effect<number, StartupError> =>
  Effect.fail(
    new StartupError({
      detail: "DISCORD_TOKEN is set but the Discord front is not wired into src/main.ts yet; unset DISCORD_TOKEN to use the terminal chat"
    })
  )

/** `DISCORD_TOKEN` set (and not blank) selects the Discord front for `npm start`. */
const discordTokenPresent = Config.option(Config.string("DISCORD_TOKEN")).pipe(
  Config.map((token) => Option.isSome(token) && token.value.trim().length > 0)
)

const program = Effect.gen(function*() {
  const command = yield* Either.match(parseCliArgs(process.argv.slice(2)), {
    onLeft: (detail) => Effect.fail(new StartupError({ detail })),
    onRight: Effect.succeed
  })
  if (command._tag === "Help") {
    yield* Effect.flatMap(TerminalOutput, (out) => out.stdout(`${USAGE}\n`))
    return 0
  }
  const settings = yield* providerSettings
  yield* runEnvSetting
  const persona = yield* personaSetting

  if (command._tag === "Once") {
    return yield* runOnce({ text: command.text, json: command.json, persona }).pipe(Effect.provide(chatLayer(settings.provider)))
  }
  if (yield* discordTokenPresent) return yield* discordFront(settings.provider)
  return yield* runInteractive({ persona }).pipe(Effect.scoped, Effect.provide(chatLayer(settings.provider)))
})

const interactive = !process.argv.slice(2).some((arg) => arg.startsWith("--once") || arg === "--help" || arg === "-h")

const main = program.pipe(
  Effect.provide(loggingLayer(interactive ? "warn" : "info")),
  Effect.catchAllCause((cause) =>
    Effect.flatMap(TerminalOutput, (out) => Effect.as(out.stderr(`loopcord: ${describeFailure(cause)}\n`), 1))
  ),
  Effect.provide(TerminalOutput.live)
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit)
      ? (typeof exit.value === "number" ? exit.value : 0)
      : Cause.isInterruptedOnly(exit.cause)
      ? 130
      : 1
    onExit(code)
    // Exit now even if a library left a handle open (keep-alive sockets, stdin).
    process.exit(code)
  }
})
