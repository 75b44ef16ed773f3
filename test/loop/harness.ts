import { Effect, Layer } from "effect"
import { type CollectingSink, type CollectingSinkOptions, makeCollectingSink } from "../../src/chat/CollectingSink"
import { ResponseSink } from "../../src/chat/ResponseSink"
import { LoopConfig, type LoopSettings } from "../../src/config/LoopConfig"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import type { AttemptInfo } from "../../src/loop/AttemptInfo"
import { makeTurnSignals, TurnSignals, type TurnSignalsShape } from "../../src/loop/TurnSignals"
import type { Script } from "../../src/provider/scripted/Script"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"

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
        LoopConfig.make(options.config)
      ))
    )
  })
