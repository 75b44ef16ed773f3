import { Cause, Config, Context, Effect, Formatter, Layer, Logger, LogLevel, Option, References, Result, Tracer } from "effect"
import type * as Fiber from "effect/Fiber"
import { runEnvSetting } from "./RunEnv"
import { invalidSetting, mapOrFail } from "./settingError"

type LogFormat = "pretty" | "json"

interface LoggingSettings {
  readonly level: LogLevel.LogLevel
  readonly format: LogFormat
}

const LEVELS: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: "All",
  trace: "Trace",
  debug: "Debug",
  info: "Info",
  warn: "Warn",
  warning: "Warn",
  error: "Error",
  fatal: "Fatal",
  none: "None"
}

/**
 * `LOG_LEVEL` (default `info`; the interactive chat passes `warn` so logs do not interleave with
 * the conversation) and `LOG_FORMAT` (`pretty` or `json`; `json` by default when `RUN_ENV=production`,
 * the default, so a deployed bot logs for machines unless told otherwise).
 */
const loggingSettingsWith = (defaultLevel: "info" | "warn"): Config.Config<LoggingSettings> =>
  Config.all({
    level: Config.String("LOG_LEVEL").pipe(
      Config.withDefault(defaultLevel),
      mapOrFail((raw) => {
        const level = LEVELS[raw.trim().toLowerCase()]
        return level === undefined
          ? Result.fail(invalidSetting("LOG_LEVEL", `must be one of trace, debug, info, warn, error, fatal, none (got "${raw}")`))
          : Result.succeed(level)
      })
    ),
    format: Config.all({ runEnv: runEnvSetting, raw: Config.option(Config.String("LOG_FORMAT")) }).pipe(
      mapOrFail(({ raw, runEnv }) => {
        if (Option.isNone(raw)) return Result.succeed<LogFormat>(runEnv === "production" ? "json" : "pretty")
        const value = raw.value.trim().toLowerCase()
        return value === "pretty" || value === "json"
          ? Result.succeed<LogFormat>(value)
          : Result.fail(invalidSetting("LOG_FORMAT", `must be pretty or json (got "${raw.value}")`))
      })
    )
  })

export const loggingSettings: Config.Config<LoggingSettings> = loggingSettingsWith("info")

/** An annotation or message value as text: strings as they are, the rest as compact JSON. */
const asText = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value instanceof Error) return `${value.name}: ${value.message}`
  if (typeof value !== "object" || value === null) return String(value)
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    // Circular or a bigint inside: the library's cycle-safe form.
    return Formatter.formatJson(value)
  }
}

/** A multi-line dump (a pretty-printed JSON block) folded onto one line. */
const oneLine = (text: string): string => (text.includes("\n") ? text.replace(/\s*\n\s*/g, " ").trim() : text)

const messageText = (message: unknown): string =>
  Array.isArray(message) ? message.map((part) => oneLine(asText(part))).join(" ") : oneLine(asText(message))

const twoDigits = (value: number): string => (value < 10 ? `0${value}` : `${value}`)
const clock = (date: Date): string => {
  const millis = date.getMilliseconds()
  return `${twoDigits(date.getHours())}:${twoDigits(date.getMinutes())}:${twoDigits(date.getSeconds())}.${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}`
}

const levelColour: Readonly<Record<string, string>> = { TRACE: "90", DEBUG: "34", INFO: "32", WARN: "33", ERROR: "31", FATAL: "101;30" }

const write = (line: string): void => {
  process.stderr.write(line)
}

/**
 * `pretty`: one line per record, `[12:00:00.123] INFO (#12): message key=value …`; a failure's
 * cause follows on the lines below. One write per record and nothing built that is not
 * printed: a step logs at `info`, so this is on the hot path.
 */
const prettyLineLogger = (options: { readonly colours: boolean }) =>
  Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
    const label = logLevel.toUpperCase()
    let line = `[${clock(date)}] ${options.colours ? `\x1b[${levelColour[label] ?? "0"}m${label}\x1b[0m` : label} (#${fiber.id}): ${messageText(message)}`
    for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) line += ` ${key}=${oneLine(asText(value))}`
    const spans = fiber.getRef(References.CurrentLogSpans)
    if (spans.length > 0) {
      const now = date.getTime()
      for (const [spanLabel, startTime] of spans) line += ` ${spanLabel}=${now - startTime}ms`
    }
    if (cause.reasons.length > 0) line += `\n${Cause.pretty(cause)}`
    write(`${line}\n`)
  })

/**
 * The trace a record belongs to, when it was logged inside a span (telemetry on): a JSON line
 * then carries `traceId` / `spanId`, so the logs on stderr join the traces in the collector.
 */
const traceOf = (fiber: Fiber.Fiber<unknown, unknown>): { readonly traceId: string; readonly spanId: string } | undefined => {
  const span = Context.getOption(fiber.context, Tracer.ParentSpan)
  return Option.isSome(span) ? { traceId: span.value.traceId, spanId: span.value.spanId } : undefined
}

/** `json`: one compact JSON object per line, the fields of Effect's `jsonLogger` (plus the trace, in a span). */
const jsonLineLogger = Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations))) fields[key] = typeof value === "string" ? oneLine(value) : value
  const spanFields: Record<string, number> = {}
  const spans = fiber.getRef(References.CurrentLogSpans)
  if (spans.length > 0) {
    const now = date.getTime()
    for (const [label, startTime] of spans) spanFields[label] = now - startTime
  }
  const record = {
    message: messageText(message),
    logLevel: logLevel.toUpperCase(),
    timestamp: date.toISOString(),
    ...(cause.reasons.length === 0 ? {} : { cause: Cause.pretty(cause) }),
    annotations: fields,
    spans: spanFields,
    fiberId: `#${fiber.id}`,
    ...traceOf(fiber)
  }
  let line: string
  try {
    line = JSON.stringify(record)
  } catch {
    line = Formatter.formatJson(record)
  }
  write(`${line}\n`)
})

/**
 * Logs go to **stderr** in every format, so stdout carries only what the front prints (the
 * `--once --json` report is exactly one line).
 */
export const loggerLayer = (settings: LoggingSettings): Layer.Layer<never> =>
  Layer.mergeAll(
    // A closed stderr (the reader went away) must not crash the process through an unhandled 'error'.
    Layer.effectDiscard(Effect.sync(() => {
      if (process.stderr.listenerCount("error") === 0) process.stderr.on("error", () => {})
    })),
    Logger.layer([settings.format === "json" ? jsonLineLogger : prettyLineLogger({ colours: process.stderr.isTTY === true })]),
    Layer.succeed(References.MinimumLogLevel, settings.level)
  )

/**
 * An info record whose annotations are built only when info records are written: below the
 * level (LOG_LEVEL=warn, the benches) it costs a level check, not the annotation object and the
 * context copies `Effect.annotateLogs` makes.
 */
export const logInfoWith = (message: string, annotations: () => Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.withFiber((fiber) =>
    LogLevel.isGreaterThanOrEqualTo("Info", fiber.getRef(References.MinimumLogLevel))
      ? Effect.annotateLogs(Effect.logInfo(message), annotations())
      : Effect.void
  )

export const loggingLayer = (defaultLevel: "info" | "warn" = "info"): Layer.Layer<never, Config.ConfigError> =>
  Layer.unwrap(Effect.map(loggingSettingsWith(defaultLevel), loggerLayer))
