import { Config, Context, Duration, Layer, Option } from "effect"
import { intSetting, integerConfig, millisSetting } from "./settings"

/** Limits of the tool loop and its stream passes (docs/architecture.md, Loop guards). */
export interface LoopSettings {
  /** Per tool call, fresh for every call in a chain. */
  readonly toolExecutionTimeout: Duration.Duration
  /** Rolling inactivity budget of a stream once content has arrived. */
  readonly streamInactivityTimeout: Duration.Duration
  /** Budget until the first content event of a pass. */
  readonly firstTokenTimeout: Duration.Duration
  /** How long an abandoned pass may settle after a timeout (0 disables). */
  readonly abandonedSettleTimeout: Duration.Duration
  readonly maxIterations: number
  readonly maxConsecutiveToolErrors: number
  /** Iteration at which the still-working notice is posted and the kill hint shown. */
  readonly softWarnIteration: number
  /** Turns a successful tool stays exposed after deliberate mode picked it. */
  readonly deliberateToolContextTurns: number
  /** Reasoning characters one pass keeps; a provider that reasons on past them is stopped. */
  readonly maxReasoningChars: number
  /** Calls of one pass that are run; the model's further calls are answered with a refusal. */
  readonly maxToolCallsPerPass: number
  /** Calls of one pass that run at the same time. */
  readonly toolCallConcurrency: number
}

/** Default and floor of `STREAM_MAX_REASONING_CHARS`. */
const DEFAULT_MAX_REASONING_CHARS = 1_048_576
const MIN_MAX_REASONING_CHARS = 1024

const defaultLoopSettings: LoopSettings = {
  toolExecutionTimeout: Duration.millis(300_000),
  streamInactivityTimeout: Duration.millis(120_000),
  firstTokenTimeout: Duration.millis(300_000),
  abandonedSettleTimeout: Duration.millis(5_000),
  maxIterations: 100,
  maxConsecutiveToolErrors: 5,
  softWarnIteration: 20,
  deliberateToolContextTurns: 3,
  maxReasoningChars: DEFAULT_MAX_REASONING_CHARS,
  maxToolCallsPerPass: 16,
  toolCallConcurrency: 4
}

const fromEnv: Config.Config<LoopSettings> = Config.all({
  toolExecutionTimeout: millisSetting("TOOL_EXECUTION_TIMEOUT_MS", { default: 300_000, min: 10_000 }),
  streamInactivityTimeout: millisSetting("STREAM_SDK_CALL_TIMEOUT_MS", { default: 120_000, min: 10_000 }),
  firstTokenOverride: Config.option(integerConfig("STREAM_FIRST_TOKEN_TIMEOUT_MS")),
  maxIterations: intSetting("BOT_MAX_FUNCTION_CALL_ITERATIONS", { default: 100, min: 1 }),
  maxConsecutiveToolErrors: intSetting("BOT_MAX_CONSECUTIVE_TOOL_ERRORS", { default: 5, min: 1 }),
  maxReasoningChars: intSetting("STREAM_MAX_REASONING_CHARS", { default: DEFAULT_MAX_REASONING_CHARS, min: MIN_MAX_REASONING_CHARS }),
  maxToolCallsPerPass: intSetting("MAX_TOOL_CALLS_PER_PASS", { default: 16, min: 1 }),
  toolCallConcurrency: intSetting("TOOL_CALL_CONCURRENCY", { default: 4, min: 1 })
}).pipe(
  Config.map(({ firstTokenOverride, ...rest }) => ({
    ...defaultLoopSettings,
    ...rest,
    // Hosted queues can take minutes before the first token: never less than the inactivity budget.
    firstTokenTimeout: Option.match(firstTokenOverride, {
      onNone: () => Duration.max(rest.streamInactivityTimeout, Duration.millis(300_000)),
      onSome: (ms) => Duration.millis(Math.max(ms, 10_000))
    })
  }))
)

export class LoopConfig extends Context.Service<LoopConfig, LoopSettings>()("loopcord/config/LoopConfig") {
  static readonly layer = Layer.effect(LoopConfig, fromEnv)
  /** Defaults with overrides, for tests and embedding. */
  static readonly make = (overrides: Partial<LoopSettings> = {}) =>
    Layer.succeed(LoopConfig, { ...defaultLoopSettings, ...overrides })
}
