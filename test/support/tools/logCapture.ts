import { Cause, Effect, Logger, References } from "effect"

export interface CapturedLog {
  /** `INFO`, `WARN`, `ERROR`, … */
  readonly level: string
  readonly message: string
  readonly annotations: Readonly<Record<string, unknown>>
  /** `Cause.pretty` of the cause logged with the line ("" when none). */
  readonly cause: string
}

/**
 * Captures log lines of the effects it wraps, beside the loggers already there (under
 * `it.effect` the console is a test console, so nothing is printed). `capture(effect)` adds the
 * logger for that effect and every fiber it forks; `logs` returns what was logged so far.
 */
export interface LogCapture {
  readonly capture: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly logs: Effect.Effect<ReadonlyArray<CapturedLog>>
  /** Lines whose message contains `fragment`. */
  readonly matching: (fragment: string) => Effect.Effect<ReadonlyArray<CapturedLog>>
}

const messageText = (message: unknown): string =>
  Array.isArray(message) ? message.map((part) => String(part)).join(" ") : String(message)

export const makeLogCapture: Effect.Effect<LogCapture> = Effect.sync(() => {
  // Loggers are synchronous callbacks; a test-local array is the simplest sink.
  const lines: Array<CapturedLog> = []
  const logger = Logger.make(({ cause, fiber, logLevel, message }) => {
    lines.push({
      level: logLevel.toUpperCase(),
      message: messageText(message),
      annotations: { ...fiber.getRef(References.CurrentLogAnnotations) },
      cause: cause.reasons.length === 0 ? "" : Cause.pretty(cause)
    })
  })
  return {
    capture: (effect) =>
      Effect.updateService(effect, Logger.CurrentLoggers, (loggers) => new Set([...loggers, logger])),
    logs: Effect.sync(() => [...lines]),
    matching: (fragment) => Effect.sync(() => lines.filter((line) => line.message.includes(fragment)))
  }
})
