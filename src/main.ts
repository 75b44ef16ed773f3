/**
 * The composition root and the only place that runs effects. Picks the front (Discord when
 * DISCORD_TOKEN is set, else the terminal chat, which needs a terminal or piped input; `--once`
 * always the terminal), the provider from LLM_PROVIDER, and wires the chat pipeline:
 *   front ─► ChannelQueue ─► TurnRunner ─► runGenerationTurn ─► runToolLoop ─► LanguageModel
 * Any start-up failure prints one line on stderr (naming the variable for a bad setting).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Result, Exit, Layer, Option } from "effect"
import { chatLayer, checkSettings, discordBotLayer, terminalFrontServices, terminalInteractiveServices } from "./appLayers"
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
import { chatInput } from "./terminal/chatInput"
import { type CliCommand, OPTIONS, parseCliArgs, USAGE } from "./terminal/cliArgs"
import { nothingConfigured, planFirstStart, withFirstStartSettings } from "./terminal/firstStart"
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

const NO_FRONT = "DISCORD_TOKEN is not set and stdin is not a terminal, a pipe or a file, so there is no one to chat with: " +
  "set DISCORD_TOKEN for the Discord bot, or run the terminal chat in a terminal (docker run -it) or with input piped in"

type ServeCommand = Exclude<CliCommand, { readonly _tag: "Help" | "Version" }>

/**
 * The interactive chat with nothing configured is a first start: a model server on this machine
 * (Ollama, LM Studio, llama.cpp) is used when one answers, else the scripted demo; either way the
 * chat opens and says which. Anything configured runs as configured.
 */
const serve = (command: ServeCommand) => Effect.gen(function*() {
  if (command._tag !== "Interactive" || !(yield* nothingConfigured)) return yield* serveConfigured(command)
  // Nobody to chat with (a container without -it): no probing, no banner, one line.
  if ((yield* chatInput) === "none") return yield* new StartupError({ detail: NO_FRONT })
  const plan = yield* planFirstStart
  yield* Effect.flatMap(TerminalOutput, (out) => out.stdout(plan.banner.map((line) => `${line}\n`).join("")))
  return yield* withFirstStartSettings(plan, serveConfigured(command))
})

const serveConfigured = (command: ServeCommand) => Effect.gen(function*() {
  const settings = yield* providerSettings
  yield* runEnvSetting
  const persona = yield* personaSetting

  const terminalChat = chatLayer(settings.provider, terminalFrontServices)
  const discord = command._tag !== "Once" && (yield* discordTokenPresent)
  // Without a token the front is the chat; with nobody to chat with (a container without -it)
  // it would end at once with exit 0, so a restart policy would loop it: say why and fail.
  if (command._tag !== "Once" && !discord && (yield* chatInput) === "none") {
    return yield* new StartupError({ detail: NO_FRONT })
  }
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
  // One build: the chat's turns and the front share the approvals service (the layer is memoized).
  const interactiveChat = Layer.merge(chatLayer(settings.provider, terminalInteractiveServices), terminalInteractiveServices)
  return yield* runInteractive({ persona }).pipe(Effect.scoped, Effect.provide(interactiveChat))
})

const program = Effect.gen(function*() {
  const command = yield* Result.match(parseCliArgs(process.argv.slice(2)), {
    onFailure: (detail) => Effect.fail(new StartupError({ detail })),
    onSuccess: Effect.succeed
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
  Effect.catchCause((cause) =>
    Effect.flatMap(TerminalOutput, (out) => Effect.as(out.stderr(`loopcord: ${describeFailure(cause)}\n`), 1))
  ),
  Effect.provide(Layer.merge(TerminalOutput.live, NodeFileSystem.layer))
)

NodeRuntime.runMain(main, {
  disableErrorReporting: true,
  teardown: (exit, onExit) => {
    const code = Exit.isSuccess(exit)
      ? (typeof exit.value === "number" ? exit.value : 0)
      : Cause.hasInterruptsOnly(exit.cause)
      ? exitCodeOnSignal
      : 1
    onExit(code)
    // Exit once stdout has taken the whole report (a pipe is written asynchronously), even if a
    // library left a handle open (keep-alive sockets, stdin).
    whenStdioFlushed(() => process.exit(code))
  }
})
