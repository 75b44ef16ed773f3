/**
 * The composition root and the only place that runs effects (design §4). Picks the front
 * (Discord when DISCORD_TOKEN is set, else the terminal; `--once` always the terminal), the
 * provider from LLM_PROVIDER, and wires the chat pipeline:
 *   front ─► ChannelQueue ─► TurnRunner ─► runGenerationTurn ─► runToolLoop ─► LanguageModel
 * Any start-up failure prints one line on stderr (naming the variable for a bad setting).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Either, Exit, Layer, Option } from "effect"
import { chatLayer, checkSettings, discordBotLayer, terminalFrontServices } from "./appLayers"
import { renderSettings, settingsCatalog } from "./config/catalog"
import { discordTokenPresent } from "./config/DiscordConfig"
import { dotenvLayer } from "./config/dotenv"
import { loggingLayer } from "./config/LoggingConfig"
import { opsSettings } from "./config/OpsConfig"
import { personaSetting } from "./config/PersonaConfig"
import { providerSettings } from "./config/ProviderConfig"
import { runEnvSetting } from "./config/RunEnv"
import { describeFailure, StartupError } from "./config/startupError"
import { packageVersion } from "./config/version"
import { telemetryLayer } from "./ops/Telemetry"
import { type CliCommand, OPTIONS, parseCliArgs, USAGE } from "./terminal/cliArgs"
import { runInteractive, runOnce } from "./terminal/TerminalFront"
import { TerminalOutput, whenStdioFlushed } from "./terminal/TerminalOutput"

/**
 * What a signal (SIGTERM/SIGINT) exits with: 0 for the Discord bot, which drains gracefully
 * (src/ops/Drain.ts) and so stops cleanly; 130 for a terminal run cut short. Read by the teardown.
 */
let exitCodeOnSignal = 130

const help = Effect.gen(function*() {
  const settings = renderSettings(yield* settingsCatalog)
  const environment = "Environment (also read from ./.env when present; the real environment wins):"
  yield* Effect.flatMap(TerminalOutput, (out) => out.stdout(`${USAGE}\n\n${OPTIONS}\n\n${environment}\n${settings}\n`))
})

const serve = (command: Exclude<CliCommand, { readonly _tag: "Help" | "Version" }>) => Effect.gen(function*() {
  const settings = yield* providerSettings
  yield* runEnvSetting
  const persona = yield* personaSetting

  const terminalChat = chatLayer(settings.provider, terminalFrontServices)
  const discord = command._tag !== "Once" && (yield* discordTokenPresent)
  yield* checkSettings(discord ? "discord" : "terminal")
  if (command._tag === "Once") {
    return yield* runOnce({ text: command.text, json: command.json, persona, images: command.images }).pipe(Effect.provide(terminalChat))
  }
  if (discord) {
    // Runs until the process is stopped: SIGINT/SIGTERM interrupt it, the replies drain, the client logs out.
    yield* Effect.sync(() => {
      exitCodeOnSignal = 0
    })
    return yield* Layer.launch(discordBotLayer(settings.provider))
  }
  return yield* runInteractive({ persona }).pipe(Effect.scoped, Effect.provide(terminalChat))
})

const program = Effect.gen(function*() {
  const command = yield* Either.match(parseCliArgs(process.argv.slice(2)), {
    onLeft: (detail) => Effect.fail(new StartupError({ detail })),
    onRight: Effect.succeed
  })
  if (command._tag === "Help") return yield* Effect.as(help, 0)
  if (command._tag === "Version") {
    const version = yield* packageVersion
    return yield* Effect.as(Effect.flatMap(TerminalOutput, (out) => out.stdout(`loopcord ${version}\n`)), 0)
  }
  // Telemetry for every front: OTLP export when OTEL_EXPORTER_OTLP_ENDPOINT is set.
  const ops = yield* opsSettings
  const version = yield* Effect.option(packageVersion)
  return yield* serve(command).pipe(
    Effect.provide(telemetryLayer(ops, Option.match(version, { onNone: () => ({}), onSome: (serviceVersion) => ({ serviceVersion }) })))
  )
})

const interactive = !process.argv.slice(2).some((arg) => arg.startsWith("--once") || arg === "--help" || arg === "-h" || arg === "--version")

const main = program.pipe(
  Effect.provide(loggingLayer(interactive ? "warn" : "info")),
  // Every setting is read through this: the environment, then ./.env (the environment wins).
  Effect.provide(dotenvLayer()),
  Effect.catchAllCause((cause) =>
    Effect.flatMap(TerminalOutput, (out) => Effect.as(out.stderr(`loopcord: ${describeFailure(cause)}\n`), 1))
  ),
  Effect.provide(Layer.merge(TerminalOutput.live, NodeFileSystem.layer))
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  disablePrettyLogger: true,
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit)
      ? (typeof exit.value === "number" ? exit.value : 0)
      : Cause.isInterruptedOnly(exit.cause)
      ? exitCodeOnSignal
      : 1
    onExit(code)
    // Exit once stdout has taken the whole report (a pipe is written asynchronously), even if a
    // library left a handle open (keep-alive sockets, stdin).
    whenStdioFlushed(() => process.exit(code))
  }
})
