/**
 * The composition root and the only place that runs effects (design §4). Picks the front
 * (Discord when DISCORD_TOKEN is set, else the terminal; `--once` always the terminal), the
 * provider from LLM_PROVIDER, and wires the chat pipeline:
 *   front ─► ChannelQueue ─► TurnRunner ─► runGenerationTurn ─► runToolLoop ─► LanguageModel
 * Any start-up failure prints one line on stderr (naming the variable for a bad setting).
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Config, Effect, Either, Exit, Layer, Option } from "effect"
import { chatLayer, checkSettings, discordBotLayer, terminalFrontServices } from "./appLayers"
import { loggingLayer } from "./config/LoggingConfig"
import { personaSetting } from "./config/PersonaConfig"
import { providerSettings } from "./config/ProviderConfig"
import { runEnvSetting } from "./config/RunEnv"
import { describeFailure, StartupError } from "./config/startupError"
import { parseCliArgs, USAGE } from "./terminal/cliArgs"
import { runInteractive, runOnce } from "./terminal/TerminalFront"
import { TerminalOutput } from "./terminal/TerminalOutput"

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

  const terminalChat = chatLayer(settings.provider, terminalFrontServices)
  const discord = command._tag !== "Once" && (yield* discordTokenPresent)
  yield* checkSettings(discord ? "discord" : "terminal")
  if (command._tag === "Once") {
    return yield* runOnce({ text: command.text, json: command.json, persona, images: command.images }).pipe(Effect.provide(terminalChat))
  }
  if (discord) {
    // Runs until the process is stopped (SIGINT/SIGTERM interrupt it and log the client out).
    return yield* Layer.launch(discordBotLayer(settings.provider))
  }
  return yield* runInteractive({ persona }).pipe(Effect.scoped, Effect.provide(terminalChat))
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
