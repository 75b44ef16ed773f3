import {
  Cause,
  Config,
  ConfigError,
  Context,
  Effect,
  Result,
  FiberId,
  FiberRef,
  FiberRefs,
  Inspectable,
  Layer,
  List,
  Logger,
  LogLevel,
  Option,
  Tracer
} from "effect"
import { runEnvSetting } from "./RunEnv"

type LogFormat = "pretty" | "json"

interface LoggingSettings {
  readonly level: LogLevel.LogLevel
  readonly format: LogFormat
}

const LEVELS: Readonly<Record<string, LogLevel.LogLevel>> = {
  all: LogLevel.All,
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

/**
 * `LOG_LEVEL` (default `info`; the interactive chat passes `warn` so logs do not interleave with
 * the conversation) and `LOG_FORMAT` (`pretty` or `json`; `json` by default when `RUN_ENV=production`,
 * the default, so a deployed bot logs for machines unless told otherwise).
 */
const loggingSettingsWith = (defaultLevel: "info" | "warn"): Config.Config<LoggingSettings> =>
  Config.all({
    level: Config.string("LOG_LEVEL").pipe(
      Config.withDefault(defaultLevel),
      Config.mapOrFail((raw) => {
        const level = LEVELS[raw.trim().toLowerCase()]
        return level === undefined
          ? Result.fail(ConfigError.InvalidData(["LOG_LEVEL"], `must be one of trace, debug, info, warn, error, fatal, none (got "${raw}")`))
          : Result.succeed(level)
      })
    ),
    format: Config.all({ runEnv: runEnvSetting, raw: Config.option(Config.string("LOG_FORMAT")) }).pipe(
      Config.mapOrFail(({ raw, runEnv }) => {
        if (Option.isNone(raw)) return Either.right<LogFormat>(runEnv === "production" ? "json" : "pretty")
        const value = raw.value.trim().toLowerCase()
        return value === "pretty" || value === "json"
          ? Either.right<LogFormat>(value)
          : Result.fail(ConfigError.InvalidData(["LOG_FORMAT"], `must be pretty or json (got "${raw.value}")`))
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
    return Inspectable.stringifyCircular(value)
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
  Logger.make<unknown, void>(({ annotations, cause, date, fiberId, logLevel, message, spans }) => {
    const label = logLevel.label
    let line = `[${clock(date)}] ${options.colours ? `\x1b[${levelColour[label] ?? "0"}m${label}\x1b[0m` : label} (${FiberId.threadName(fiberId)}): ${messageText(message)}`
    for (const [key, value] of annotations) line += ` ${key}=${oneLine(asText(value))}`
    if (List.isCons(spans)) {
      const now = date.getTime()
      for (const span of spans) line += ` ${span.label}=${now - span.startTime}ms`
    }
    if (!Cause.isEmpty(cause)) line += `\n${Cause.pretty(cause, { renderErrorCause: true })}`
    write(`${line}\n`)
  })

/**
 * The trace a record belongs to, when it was logged inside a span (telemetry on): a JSON line
 * then carries `traceId` / `spanId`, so the logs on stderr join the traces in the collector.
 */
const traceOf = (context: FiberRefs.FiberRefs): { readonly traceId: string; readonly spanId: string } | undefined => {
  const span = Context.getOption(FiberRefs.getOrDefault(context, FiberRef.currentContext), Tracer.ParentSpan)
  return Option.isSome(span) ? { traceId: span.value.traceId, spanId: span.value.spanId } : undefined
}

/** `json`: one compact JSON object per line, the fields of Effect's `jsonLogger` (plus the trace, in a span). */
const jsonLineLogger = Logger.make<unknown, void>(({ annotations, cause, context, date, fiberId, logLevel, message, spans }) => {
  const fields: Record<string, unknown> = {}
  for (const [key, value] of annotations) fields[key] = typeof value === "string" ? oneLine(value) : value
  const spanFields: Record<string, number> = {}
  if (List.isCons(spans)) {
    const now = date.getTime()
    for (const span of spans) spanFields[span.label] = now - span.startTime
  }
  const record = {
    message: messageText(message),
    logLevel: logLevel.label,
    timestamp: date.toISOString(),
    ...(Cause.isEmpty(cause) ? {} : { cause: Cause.pretty(cause, { renderErrorCause: true }) }),
    annotations: fields,
    spans: spanFields,
    fiberId: FiberId.threadName(fiberId),
    ...traceOf(context)
  }
  let line: string
  try {
    line = JSON.stringify(record)
  } catch {
    line = Inspectable.stringifyCircular(record)
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
    Logger.replace(
      Logger.defaultLogger,
      settings.format === "json" ? jsonLineLogger : prettyLineLogger({ colours: process.stderr.isTTY === true })
    ),
    Logger.minimumLogLevel(settings.level)
  )

/**
 * An info record whose annotations are built only when info records are written: below the
 * level (LOG_LEVEL=warn, the benches) it costs a level check, not the annotation object and the
 * FiberRef copies `Effect.annotateLogs` makes.
 */
export const logInfoWith = (message: string, annotations: () => Readonly<Record<string, unknown>>): Effect.Effect<void> =>
  Effect.asVoid(Effect.whenLogLevel(Effect.suspend(() => Effect.annotateLogs(Effect.logInfo(message), annotations())), LogLevel.Info))

export const loggingLayer = (defaultLevel: "info" | "warn" = "info"): Layer.Layer<never, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(loggingSettingsWith(defaultLevel), loggerLayer))
