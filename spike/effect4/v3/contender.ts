/**
 * The Effect 3 side of the spike's bench: the project's own hot path (imported from src/) driven
 * turn by turn. A turn is a minimal tool loop (the same as `../v4/contender.ts`, line for line): declare the turn's tools,
 * stream one model call with `streamOnce`, run its tool call with `executeToolCall`, replay the
 * pair, until the model answers. Per turn, as `TurnRunner` does: the turn's signals (with their
 * alarm), its state and its sink in one Context over the app's services, the alarm stopped at the
 * end. The provider is the OpenAI-compatible one over the lean undici HttpClient (256 sockets).
 * Services the hot path only touches are the same stubs as on the v4 side (affordances).
 */
import { Context, Duration, Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted, Ref, Schema } from "effect"
import { createRequire } from "node:module"
import type { Contender, ContenderOptions, TurnOutcome } from "../../../test/bench/support/contender"
import { LoopConfig, type LoopSettings } from "../../../src/config/LoopConfig"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import { toolSuccess } from "../../../src/domain/ToolResult"
import type { AttemptInfo } from "../../../src/loop/AttemptInfo"
import { deliberateModeOff } from "../../../src/domain/DeliberateToolMode"
import { CurrentTurn, type TurnContextShape } from "../../../src/loop/CurrentTurn"
import { executeToolCall } from "../../../src/loop/executeToolCall"
import { PendingContextStash } from "../../../src/loop/PendingContextStash"
import { ResponseSink } from "../../../src/loop/ResponseSink"
import { streamOnce } from "../../../src/loop/streamOnce"
import { ThoughtLog } from "../../../src/loop/ThoughtLog"
import { makeTurnSignals, TurnSignals, type TurnSignalsShape } from "../../../src/loop/TurnSignals"
import type { GenerationRequest } from "../../../src/provider/GenerationRequest"
import { LanguageModel } from "../../../src/provider/LanguageModel"
import * as OpenAiCompatible from "../../../src/provider/openai/OpenAiCompatible"
import { providerHttpClient } from "../../../src/provider/providerHttpClient"
import { GuildToolSource } from "../../../src/tools/GuildToolSource"
import { StickerCatalog } from "../../../src/tools/StickerCatalog"
import { makeTool, toDeclaration } from "../../../src/tools/Tool"
import { ToolAffordances } from "../../../src/tools/ToolAffordances"
import { make as makeRegistry, registerAll, ToolRegistry } from "../../../src/tools/ToolRegistry"
import { ToolUsageStats } from "../../../src/tools/ToolUsageStats"
import { makeTurnState } from "../../../src/tools/TurnState"

const MODEL = "bench-model"
const API_KEY = Redacted.make("bench-key")
const SYSTEM_PROMPT = "You are a benchmark. Call the tools you are asked to call."

const benchTools = {
  echo: makeTool({
    name: "echo",
    description: "Echoes the text back",
    category: "utility",
    parameters: Schema.Struct({ text: Schema.String }),
    execute: ({ text }) => Effect.succeed(toolSuccess({ echoed: text }))
  }),
  // For the smoke check's timeout path: a raw Promise that never settles and ignores every signal.
  never_tool: makeTool({
    name: "never_tool",
    description: "A tool that never returns",
    category: "utility",
    parameters: Schema.Struct({}),
    execute: () => Effect.promise(() => new Promise<never>(() => {}))
  })
}

export interface SpikeContenderOptions extends ContenderOptions {
  /** Every pass and tool budget (first token, inactivity, tool, settling), for the smoke check; default: the loop's defaults. */
  readonly budgetMs?: number
}

const budgets = (ms: number | undefined): Partial<LoopSettings> => {
  if (ms === undefined) return {}
  const budget = Duration.millis(ms)
  return { toolExecutionTimeout: budget, streamInactivityTimeout: budget, firstTokenTimeout: budget, abandonedSettleTimeout: budget }
}

const appLayer = (options: SpikeContenderOptions) => {
  const registry = Layer.effect(
    ToolRegistry,
    Effect.tap(makeRegistry, (made) => Effect.orDie(registerAll(made, options.tools.flatMap((name) => name === "echo" || name === "never_tool" ? [benchTools[name]] : []))))
  ).pipe(Layer.provide(GuildToolSource.none))
  return Layer.mergeAll(
    OpenAiCompatible.layer({ baseUrl: options.baseUrl }).pipe(Layer.provide(providerHttpClient())),
    registry,
    ThoughtLog.logged,
    LoopConfig.make({ maxIterations: options.maxSteps, ...budgets(options.budgetMs) }),
    // The same stub as the v4 side: only deliberate mode reads it.
    Layer.succeed(ToolAffordances, { retain: () => Effect.void, retained: () => Effect.succeed([]), turnEnded: () => Effect.void }),
    StickerCatalog.none,
    ToolUsageStats.none,
    PendingContextStash.Default,
    // Warnings and errors only, on stderr (stdout carries the worker's JSON): the loop benches' quietLogs.
    Logger.minimumLogLevel(LogLevel.Warning),
    Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger))
  )
}

/** The minimal tool loop: the same steps as runToolLoop's FunctionCall path, nothing else. */
const toolLoop = Effect.gen(function*() {
  const config = yield* LoopConfig
  const turn = yield* CurrentTurn
  const registry = yield* ToolRegistry
  const model = yield* LanguageModel
  const attempt: AttemptInfo = { provider: model.name, model: MODEL, suppressUserErrors: false, credentialSource: "operator" }
  const history: Array<ToolHistoryEntry> = []
  for (let iteration = 0; iteration < config.maxIterations; iteration++) {
    const tools = yield* registry.toolsForTurn({
      provider: attempt.provider,
      model: attempt.model,
      guildId: turn.guildId,
      channelId: turn.channelId,
      flags: yield* Ref.get(turn.state.flags),
      turnState: turn.state
    })
    const request: GenerationRequest = {
      model: attempt.model,
      apiKey: API_KEY,
      system: turn.persona.systemPrompt,
      messages: yield* Ref.get(turn.state.contextItems),
      tools: tools.map(toDeclaration),
      functionHistory: [...history]
    }
    const pass = yield* streamOnce({ request, attempt, continuing: "" })
    if (pass._tag !== "FunctionCall") return pass._tag === "Completed" ? "completed" : pass._tag
    // The spike's passes make one call each: the per-call stage takes it with the pass's text.
    const outcome = yield* executeToolCall({ call: pass.calls[0]!, preToolText: pass.accumulatedText, iteration, attempt })
    if (outcome._tag !== "History") return outcome._tag
    history.push(outcome.historyEntry)
  }
  return "max_iterations"
})

type ResponseSinkShape = Context.Tag.Service<typeof ResponseSink>

/** A sink that keeps what was delivered and stamps the first delta. */
const makeTextSink = () => {
  let delivered = ""
  let passStart = 0
  let first: number | undefined
  const sink: ResponseSinkShape = {
    write: (delta) =>
      Effect.sync(() => {
        first ??= Number(process.hrtime.bigint())
        delivered += delta
      }),
    endPass: () =>
      Effect.sync(() => {
        const text = delivered.slice(passStart)
        passStart = delivered.length
        return text
      }),
    delivered: Effect.sync(() => delivered),
    notice: () => Effect.void
  }
  return { sink, text: () => delivered, firstDeltaAt: () => first }
}

export const makeContender = async (options: SpikeContenderOptions): Promise<Contender> => {
  const runtime = ManagedRuntime.make(appLayer(options))
  const services = (await runtime.runtime()).context
  let channels = 0
  const runTurn = (message: string, channelId: string, sink: ResponseSinkShape, signals: TurnSignalsShape) =>
    Effect.gen(function*() {
      const state = yield* makeTurnState([{ role: "user", content: message }])
      const turn: TurnContextShape = {
        channelId,
        guildId: "bench-guild",
        userId: "bench-user",
        messageId: `${channelId}-message`,
        isDM: false,
        locale: "en",
        persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: SYSTEM_PROMPT },
        isUserImpersonation: false,
        impersonatedUserId: undefined,
        shouldSurfaceUserErrors: true,
        isFromQueue: false,
        isStopResponse: false,
        deliberate: deliberateModeOff,
        state
      }
      // The app's services plus this turn's: a plain Context, as TurnRunner builds it.
      const perTurn = Context.make(ResponseSink, sink).pipe(Context.add(CurrentTurn, turn), Context.add(TurnSignals, signals))
      return yield* toolLoop.pipe(Effect.provide(Context.merge(services, perTurn)), Effect.ensuring(signals.alarm.stop))
    })
  return {
    name: "effect3",
    start: (message) => {
      const text = makeTextSink()
      const channelId = `channel-${++channels}`
      const signals = runtime.runSync(makeTurnSignals(channelId))
      const done = runtime.runPromise(runTurn(message, channelId, text.sink, signals)).then(
        (status): TurnOutcome => ({ text: text.text(), status })
      )
      return { done, kill: () => void runtime.runPromise(signals.kill({ requesterId: "bench-user" })), firstDeltaAt: text.firstDeltaAt }
    },
    close: () => runtime.dispose()
  }
}

/** The Effect version this side runs on (the package this file resolves). */
export const effectVersion: string = (createRequire(import.meta.url)("effect/package.json") as { readonly version: string }).version
