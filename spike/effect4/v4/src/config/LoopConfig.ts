import { Context, Duration, Layer } from "effect"

/** Limits of the tool loop and its stream passes. */
export interface LoopSettings {
  readonly toolExecutionTimeout: Duration.Duration
  readonly streamInactivityTimeout: Duration.Duration
  readonly firstTokenTimeout: Duration.Duration
  readonly abandonedSettleTimeout: Duration.Duration
  readonly maxIterations: number
  readonly maxConsecutiveToolErrors: number
  readonly softWarnIteration: number
  readonly deliberateToolContextTurns: number
  readonly maxReasoningChars: number
}

export const DEFAULT_MAX_REASONING_CHARS = 1_048_576

export const defaultLoopSettings: LoopSettings = {
  toolExecutionTimeout: Duration.millis(300_000),
  streamInactivityTimeout: Duration.millis(120_000),
  firstTokenTimeout: Duration.millis(300_000),
  abandonedSettleTimeout: Duration.millis(5_000),
  maxIterations: 100,
  maxConsecutiveToolErrors: 5,
  softWarnIteration: 20,
  deliberateToolContextTurns: 3,
  maxReasoningChars: DEFAULT_MAX_REASONING_CHARS
}

// Not ported: the env reader (`LoopConfig.layer`, Config.all over the settings). Only the defaults
// and `make` are on the bench's path.
export class LoopConfig extends Context.Service<LoopConfig, LoopSettings>()("loopcord/config/LoopConfig") {
  /** Defaults with overrides, for tests and embedding. */
  static readonly make = (overrides: Partial<LoopSettings> = {}) =>
    Layer.succeed(LoopConfig, { ...defaultLoopSettings, ...overrides })
}
