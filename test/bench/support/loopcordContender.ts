/**
 * loopcord as a contender: the OpenAI-compatible provider Layer over the app's providerHttpClient
 * (loopcord's undici HttpClient, 256 sockets per origin), the real ToolRegistry with the bench
 * tools, runGenerationTurn → runToolLoop behind TurnRunner and ChannelQueue (the production path: one channel per turn), and a minimal sink
 * that keeps the delivered text. Logs below Warning are off (the other contenders log nothing).
 */
import { Duration, Effect, Layer, Logger, ManagedRuntime, References, Schema } from "effect"
import { ChannelQueue } from "../../../src/chat/ChannelQueue"
import type { ResponseSink } from "../../../src/loop/ResponseSink"
import type { TurnInput } from "../../../src/chat/TurnInput"
import { TurnRunner } from "../../../src/chat/TurnRunner"
import { loggerLayer } from "../../../src/config/LoggingConfig"
import { LoopConfig, type LoopSettings } from "../../../src/config/LoopConfig"
import { toolSuccess } from "../../../src/domain/ToolResult"
import { KeyPool } from "../../../src/loop/KeyPool"
import { PendingContextStash } from "../../../src/loop/PendingContextStash"
import { RoutePlan } from "../../../src/loop/RoutePlan"
import { ThoughtLog } from "../../../src/loop/ThoughtLog"
import type { LanguageModel } from "../../../src/provider/LanguageModel"
import * as OpenAiCompatible from "../../../src/provider/openai/OpenAiCompatible"
import { providerHttpClient } from "../../../src/provider/providerHttpClient"
import { GuildToolSource } from "../../../src/tools/GuildToolSource"
import * as InMemoryToolAffordances from "../../../src/tools/InMemoryToolAffordances"
import { StickerCatalog } from "../../../src/tools/StickerCatalog"
import { makeTool, type Tool } from "../../../src/tools/Tool"
import { ToolContext } from "../../../src/tools/ToolContext"
import { ToolError } from "../../../src/tools/ToolError"
import { registerAll, ToolRegistry } from "../../../src/tools/ToolRegistry"
import { ToolUsageStats } from "../../../src/tools/ToolUsageStats"
import {
  API_KEY,
  type BenchToolName,
  type Contender,
  type ContenderOptions,
  fetchSlow,
  MODEL,
  neverSettles,
  nowNs,
  slowLookup,
  type SlowToolName,
  SYSTEM_PROMPT,
  toolDescriptions,
  type TurnOutcome
} from "./contender"

const slowTool = (toolUrl: string, name: SlowToolName): Tool =>
  makeTool({
    name,
    description: toolDescriptions[name],
    category: "utility",
    parameters: Schema.Struct({ id: Schema.String, ms: Schema.Number }),
    execute: (args) =>
      Effect.flatMap(ToolContext, (context) =>
        Effect.tryPromise({
          try: () => slowLookup(toolUrl, args, context.abortSignal),
          catch: (cause) => new ToolError({ tool: name, error: String(cause) })
        })).pipe(Effect.map((body) => toolSuccess(body)))
  })

export const benchTools = (toolUrl: string): Record<BenchToolName, Tool> => ({
  echo: makeTool({
    name: "echo",
    description: toolDescriptions.echo,
    category: "utility",
    parameters: Schema.Struct({ text: Schema.String }),
    execute: ({ text }) => Effect.succeed(toolSuccess({ echoed: text }))
  }),
  fetch_slow: makeTool({
    name: "fetch_slow",
    description: toolDescriptions.fetch_slow,
    category: "utility",
    parameters: Schema.Struct({ id: Schema.String, hang: Schema.Boolean }),
    execute: (args) =>
      Effect.flatMap(ToolContext, (context) =>
        Effect.tryPromise({
          try: () => fetchSlow(toolUrl, args, context.abortSignal),
          catch: (cause) => new ToolError({ tool: "fetch_slow", error: String(cause) })
        })).pipe(Effect.map((body) => toolSuccess(body)))
  }),
  never_tool: makeTool({
    name: "never_tool",
    description: toolDescriptions.never_tool,
    category: "utility",
    parameters: Schema.Struct({}),
    // A raw Promise that never settles and ignores the AbortSignal Effect.promise would offer.
    execute: () => Effect.promise(() => neverSettles())
  }),
  slow_a: slowTool(toolUrl, "slow_a"),
  slow_b: slowTool(toolUrl, "slow_b"),
  slow_c: slowTool(toolUrl, "slow_c")
})

export interface LoopcordLayerOptions extends ContenderOptions {
  readonly models?: ReadonlyArray<string>
  readonly keys?: ReadonlyArray<string>
  readonly loop?: Partial<LoopSettings>
  /** Replaces the OpenAI-compatible provider over providerHttpClient (diagnostics). */
  readonly modelLayer?: Layer.Layer<LanguageModel>
}

/** Every service a ChannelQueue turn needs, with the bench tools and the loopback provider. */
export const loopcordLayer = (options: LoopcordLayerOptions) => {
  const tools = benchTools(options.toolUrl)
  const registry = Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const made = yield* Effect.provide(ToolRegistry, ToolRegistry.layer)
      yield* Effect.orDie(registerAll(made, options.tools.map((name) => tools[name])))
      return made
    })
  ).pipe(Layer.provide(GuildToolSource.none))
  const core = Layer.mergeAll(
    options.modelLayer ?? OpenAiCompatible.layer({ baseUrl: options.baseUrl }).pipe(Layer.provide(providerHttpClient())),
    registry,
    ThoughtLog.logged,
    LoopConfig.make({
      maxIterations: options.maxSteps,
      ...(options.toolTimeoutMs === undefined ? {} : { toolExecutionTimeout: Duration.millis(options.toolTimeoutMs) }),
      ...options.loop
    }),
    InMemoryToolAffordances.layer,
    StickerCatalog.none,
    ToolUsageStats.none,
    PendingContextStash.Default,
    RoutePlan.make(options.models ?? [MODEL], options.keys ?? [API_KEY]),
    KeyPool.Default
  )
  return ChannelQueue.Default.pipe(Layer.provide(TurnRunner.Default), Layer.provideMerge(core))
}

/** A sink that keeps what was delivered and stamps the first delta. */
export const makeTextSink = () => {
  let delivered = ""
  let passStart = 0
  let first: number | undefined
  const sink: ResponseSink["Service"] = {
    write: (delta) =>
      Effect.sync(() => {
        first ??= nowNs()
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

export const turnInput = (channelId: string, message: string, sink: ResponseSink["Service"]): TurnInput => ({
  channelId,
  guildId: "bench-guild",
  userId: "bench-user",
  messageId: `${channelId}-message`,
  isDM: false,
  locale: "en",
  persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: SYSTEM_PROMPT },
  loadContext: Effect.succeed([{ role: "user", content: message }]),
  shouldSurfaceUserErrors: true,
  openSink: Effect.succeed({ sink })
})

/** Warnings and errors only, on stderr (stdout carries the bench's Markdown). */
export const quietLogs = Layer.merge(
  Layer.succeed(References.MinimumLogLevel, "Warn"),
  Logger.layer([Logger.withConsoleError(Logger.formatLogFmt)])
)

/** What a deployed bot logs with (RUN_ENV=production's defaults): info records as JSON lines on stderr. */
export const productionLogs = loggerLayer({ level: "Info", format: "json" })

export const makeLoopcord = async (
  options: ContenderOptions,
  logs: Layer.Layer<never> = quietLogs
): Promise<Contender> => {
  const runtime = ManagedRuntime.make(Layer.merge(loopcordLayer(options), logs))
  const queue = await runtime.runPromise(ChannelQueue)
  let channels = 0
  return {
    name: "loopcord",
    start: (message) => {
      const channelId = `channel-${++channels}`
      const text = makeTextSink()
      const done = runtime.runPromise(
        Effect.flatMap(queue.submit(turnInput(channelId, message, text.sink)), (ticket) => ticket.result).pipe(
          Effect.map((result): TurnOutcome => ({ text: text.text(), status: result.status })),
          Effect.catch((error) => Effect.succeed<TurnOutcome>({ text: text.text(), status: error._tag }))
        )
      )
      return {
        done,
        kill: () => void runtime.runPromise(queue.kill(channelId, { requesterId: "bench-user" })),
        firstDeltaAt: text.firstDeltaAt
      }
    },
    close: () => runtime.dispose()
  }
}
