/**
 * Everything executeToolCall (and runToolLoop, minus the LanguageModel) needs, as fresh
 * in-memory services for one test:
 *
 *   const h = yield* makeToolCallHarness({ tools: [echoTool], loop: { toolExecutionTimeout: Duration.seconds(10) } })
 *   const outcome = yield* h.run(executeToolCall({ ...callInput({ name: "echo_tool", args: { text: "hi" } }), iteration: 0, attempt: testAttempt }))
 *
 * `h.layer` provides ToolRegistry (real, with `tools` and `aliases` registered), GuildToolSource,
 * TurnSignals (real, for `channelId`), CurrentTurn, ThoughtLog (capturing), LoopConfig,
 * ResponseSink (recording), ToolAffordances (in-memory), StickerCatalog (from `stickers`),
 * ToolUsageStats (recording) and PendingContextStash. `h.run(effect)` provides the layer and
 * captures logs into `h.logs`. Build the harness inside the test so nothing is shared.
 */
import { Effect, Layer, Option } from "effect"
import { LoopConfig, type LoopSettings } from "../../../src/config/LoopConfig"
import type { ChatMessage } from "../../../src/domain/ChatMessage"
import { FunctionCall } from "../../../src/domain/FunctionCall"
import type { Sticker } from "../../../src/domain/Sticker"
import type { AttemptInfo } from "../../../src/loop/AttemptInfo"
import { deliberateModeOff } from "../../../src/domain/DeliberateToolMode"
import { CurrentTurn, type TurnContextShape } from "../../../src/loop/CurrentTurn"
import type { ExecuteToolCallServices } from "../../../src/loop/executeToolCall"
import { PendingContextStash } from "../../../src/loop/PendingContextStash"
import { makeTurnSignals, TurnSignals, type TurnSignalsShape } from "../../../src/loop/TurnSignals"
import { emptyGuildToolSet, GuildToolSource, type GuildToolSet } from "../../../src/tools/GuildToolSource"
import { OpaqueIds } from "../../../src/tools/OpaqueIds"
import * as InMemoryToolAffordances from "../../../src/tools/InMemoryToolAffordances"
import { StickerCatalog } from "../../../src/tools/StickerCatalog"
import type { Tool } from "../../../src/tools/Tool"
import { ToolAffordances, type ToolAffordancesShape } from "../../../src/tools/ToolAffordances"
import { make as makeRegistry, registerAll, ToolRegistry, type ToolRegistryShape } from "../../../src/tools/ToolRegistry"
import { makeTurnState, type TurnState } from "../../../src/tools/TurnState"
import { type CapturingThoughtLog, makeCapturingThoughtLog } from "./capturingThoughtLog"
import { type LogCapture, makeLogCapture } from "./logCapture"
import { makeRecordingResponseSink, type RecordingResponseSink } from "./recordingResponseSink"
import { makeRecordingUsageStats, type RecordingUsageStats } from "./recordingUsageStats"

export const testAttempt: AttemptInfo = { provider: "openai-compatible", model: "test-model", suppressUserErrors: false, credentialSource: "operator" }

/** executeToolCall's input for `call` (pass `undefined` or junk to test validation) after `preToolText`. */
export const callInput = (call: unknown, preToolText = ""): { readonly call: FunctionCall; readonly preToolText: string } => ({
  // Tests deliberately feed malformed calls through the typed field.
  call: call as FunctionCall,
  preToolText
})

export const testTurn = (state: TurnState, overrides: Partial<Omit<TurnContextShape, "state">> = {}): TurnContextShape => ({
  channelId: "channel-1",
  guildId: "guild-1",
  userId: "user-1",
  messageId: "message-1",
  isDM: false,
  locale: "en",
  persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: "You are a test bot." },
  isUserImpersonation: false,
  impersonatedUserId: undefined,
  shouldSurfaceUserErrors: true,
  isFromQueue: false,
  isStopResponse: false,
  deliberate: deliberateModeOff,
  ...overrides,
  state
})

export interface ToolCallHarnessOptions {
  readonly tools?: ReadonlyArray<Tool>
  readonly aliases?: ReadonlyArray<readonly [alias: string, target: string]>
  /** Guild tools per guild id (default: none). */
  readonly guildTools?: (guildId: string) => GuildToolSet
  readonly loop?: Partial<LoopSettings>
  readonly turn?: Partial<Omit<TurnContextShape, "state">>
  readonly contextItems?: ReadonlyArray<ChatMessage>
  /** Stickers known to the catalog (any guild). */
  readonly stickers?: ReadonlyArray<Sticker>
  /** Wraps the real TurnSignals (e.g. a kill without a stop). */
  readonly signals?: (real: TurnSignalsShape) => TurnSignalsShape
  /** Opaque-id resolution for the registry (default: none, ids pass unresolved). */
  readonly opaqueIds?: OpaqueIds["Service"]
}

/** What executeToolCall needs, plus the guild tool source behind the registry. */
export type ToolCallServices = ExecuteToolCallServices | GuildToolSource | StickerCatalog

export interface ToolCallHarness {
  readonly layer: Layer.Layer<ToolCallServices>
  /** Provides `layer` and captures logs; other requirements (e.g. a LanguageModel) stay open. */
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, Exclude<R, ToolCallServices>>
  readonly registry: ToolRegistryShape
  readonly signals: TurnSignalsShape
  readonly turn: TurnContextShape
  readonly state: TurnState
  readonly thoughtLog: CapturingThoughtLog
  readonly sink: RecordingResponseSink
  readonly stats: RecordingUsageStats
  readonly affordances: ToolAffordancesShape
  readonly stash: PendingContextStash["Service"]
  readonly logs: LogCapture
}

export const makeToolCallHarness = (options: ToolCallHarnessOptions = {}): Effect.Effect<ToolCallHarness> =>
  Effect.gen(function*() {
    const guildSource = GuildToolSource.of({
      forGuild: (guildId) => Effect.succeed(options.guildTools?.(guildId) ?? emptyGuildToolSet)
    })
    const registry = yield* makeRegistry.pipe(
      Effect.provideService(GuildToolSource, guildSource),
      (made) => options.opaqueIds === undefined ? made : Effect.provideService(made, OpaqueIds, options.opaqueIds)
    )
    yield* Effect.orDie(registerAll(registry, options.tools ?? [], options.aliases ?? []))
    const state = yield* makeTurnState(options.contextItems ?? [])
    const turn = testTurn(state, options.turn)
    const realSignals = yield* makeTurnSignals(turn.channelId)
    const signals = options.signals?.(realSignals) ?? realSignals
    const thoughtLog = yield* makeCapturingThoughtLog
    const sink = yield* makeRecordingResponseSink
    const stats = yield* makeRecordingUsageStats
    const affordances = yield* InMemoryToolAffordances.make
    const stash = yield* Effect.provide(PendingContextStash, PendingContextStash.Default)
    const logs = yield* makeLogCapture
    const stickers = options.stickers ?? []
    const layer = Layer.mergeAll(
      Layer.succeed(ToolRegistry, registry),
      Layer.succeed(GuildToolSource, guildSource),
      Layer.succeed(TurnSignals, signals),
      Layer.succeed(CurrentTurn, turn),
      thoughtLog.layer,
      LoopConfig.make(options.loop),
      sink.layer,
      Layer.succeed(ToolAffordances, affordances),
      Layer.succeed(StickerCatalog, {
        lookup: (_guildId, stickerId) => Effect.succeed(Option.fromNullishOr(stickers.find((sticker) => sticker.id === stickerId)))
      }),
      stats.layer,
      Layer.succeed(PendingContextStash, stash)
    )
    return {
      layer,
      run: (effect) => logs.capture(Effect.provide(effect, layer)),
      registry,
      signals,
      turn,
      state,
      thoughtLog,
      sink,
      stats,
      affordances,
      stash,
      logs
    }
  })

/** A FunctionCall value, for building expected history entries. */
export const call = (name: string, args?: Readonly<Record<string, unknown>>, extra: Partial<FunctionCall> = {}): FunctionCall =>
  FunctionCall({ name, ...(args === undefined ? {} : { args }), ...extra })
