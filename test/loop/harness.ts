import { Effect, Layer, Ref } from "effect"
import { type CollectingSink, type CollectingSinkOptions, makeCollectingSink } from "../../src/chat/CollectingSink"
import { ResponseSink } from "../../src/loop/ResponseSink"
import { LoopConfig, type LoopSettings } from "../../src/config/LoopConfig"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import type { AttemptInfo } from "../../src/loop/AttemptInfo"
import { StopResponses } from "../../src/loop/StopResponses"
import { makeTurnSignals, type StopContext, TurnSignals, type TurnSignalsShape } from "../../src/loop/TurnSignals"
import { ToolRegistry, type ToolRegistryShape } from "../../src/tools/ToolRegistry"
import { makeToolCallHarness, type ToolCallHarness, type ToolCallHarnessOptions } from "../support/tools/toolCallHarness"
import type { Script } from "../../src/provider/scripted/Script"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { settlingTestClock } from "../support/settlingClock"

export const request = (overrides: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: "model-a",
  apiKey: undefined,
  system: "You are a test.",
  messages: [{ role: "user", content: "hi" }],
  tools: [],
  functionHistory: [],
  ...overrides
})

export const attempt = (overrides: Partial<AttemptInfo> = {}): AttemptInfo => ({
  provider: "scripted",
  model: "model-a",
  suppressUserErrors: false,
  credentialSource: "operator",
  ...overrides
})

export interface PassHarness {
  readonly collected: CollectingSink
  readonly signals: TurnSignalsShape
}

/**
 * Runs `body` with a scripted model, a collecting sink, fresh turn signals and loop limits.
 * Returns the body's value; the sink and signals are handed to the body for assertions.
 */
export const withPassHarness = <A, E, R>(
  options: {
    readonly script: Script
    readonly sink?: CollectingSinkOptions
    readonly config?: Partial<LoopSettings>
  },
  body: (harness: PassHarness) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const collected = yield* makeCollectingSink(options.sink)
    const signals = yield* makeTurnSignals("channel-1")
    return yield* body({ collected, signals }).pipe(
      Effect.provide(Layer.mergeAll(
        Scripted.layer({ script: options.script }),
        Layer.succeed(ResponseSink, collected.sink),
        Layer.succeed(TurnSignals, signals),
        LoopConfig.make(options.config),
        settlingTestClock
      ))
    )
  })

export interface LoopHarness {
  readonly tools: ToolCallHarness
  readonly collected: CollectingSink
  readonly signals: TurnSignalsShape
  /** Stop responses the loop queued (what ChannelQueue would put at the front). */
  readonly stopResponses: Effect.Effect<ReadonlyArray<StopContext>>
  /** How often the loop or executeToolCall asked the registry whether a tool requires a follow-up. */
  readonly followUpLookups: Effect.Effect<ReadonlyArray<string>>
  /** The same lookups with every argument: `[tool, provider, guildId]` (spec scenario 34). */
  readonly followUpCalls: Effect.Effect<ReadonlyArray<readonly [string, string, string | undefined]>>
}

/**
 * The tool-call harness (real registry, executeToolCall services) plus a scripted model, a
 * collecting sink and a recording StopResponses: everything runToolLoop and runGenerationTurn need.
 */
export const withLoopHarness = <A, E, R>(
  options: ToolCallHarnessOptions & {
    readonly script: Script
    readonly sink?: CollectingSinkOptions
  },
  body: (harness: LoopHarness) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const tools = yield* makeToolCallHarness(options)
    const collected = yield* makeCollectingSink(options.sink)
    const stops = yield* Ref.make<ReadonlyArray<StopContext>>([])
    const lookups = yield* Ref.make<ReadonlyArray<string>>([])
    const calls = yield* Ref.make<ReadonlyArray<readonly [string, string, string | undefined]>>([])
    const registry: ToolRegistryShape = {
      ...tools.registry,
      requiresFollowUp: (name, provider, guildId) =>
        Effect.andThen(
          Effect.andThen(Ref.update(lookups, (all) => [...all, name]), Ref.update(calls, (all) => [...all, [name, provider, guildId] as const])),
          tools.registry.requiresFollowUp(name, provider, guildId)
        )
    }
    const harness: LoopHarness = {
      tools,
      collected,
      signals: tools.signals,
      stopResponses: Ref.get(stops),
      followUpLookups: Ref.get(lookups),
      followUpCalls: Ref.get(calls)
    }
    return yield* tools.run(body(harness).pipe(
      Effect.provide(Layer.mergeAll(
        Scripted.layer({ script: options.script }),
        Layer.succeed(ResponseSink, collected.sink),
        Layer.succeed(ToolRegistry, registry),
        Layer.succeed(StopResponses, { queue: (stop) => Ref.update(stops, (all) => [...all, stop]) }),
        settlingTestClock
      ))
    ))
  })
