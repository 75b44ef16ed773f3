import { Config, ConfigError, Effect, Either, Layer, Logger, LogLevel, Option } from "effect"
import { runEnvSetting } from "./RunEnv"

export type LogFormat = "pretty" | "json"

export interface LoggingSettings {
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
export const loggingSettingsWith = (defaultLevel: "info" | "warn"): Config.Config<LoggingSettings> =>
  Config.all({
    level: Config.string("LOG_LEVEL").pipe(
      Config.withDefault(defaultLevel),
      Config.mapOrFail((raw) => {
        const level = LEVELS[raw.trim().toLowerCase()]
        return level === undefined
          ? Either.left(ConfigError.InvalidData(["LOG_LEVEL"], `must be one of trace, debug, info, warn, error, fatal, none (got "${raw}")`))
          : Either.right(level)
      })
    ),
    format: Config.all({ runEnv: runEnvSetting, raw: Config.option(Config.string("LOG_FORMAT")) }).pipe(
      Config.mapOrFail(({ raw, runEnv }) => {
        if (Option.isNone(raw)) return Either.right<LogFormat>(runEnv === "production" ? "json" : "pretty")
        const value = raw.value.trim().toLowerCase()
        return value === "pretty" || value === "json"
          ? Either.right<LogFormat>(value)
          : Either.left(ConfigError.InvalidData(["LOG_FORMAT"], `must be pretty or json (got "${raw.value}")`))
      })
    )
  })

export const loggingSettings: Config.Config<LoggingSettings> = loggingSettingsWith("info")

/**
 * Logs go to **stderr** in every format, so stdout carries only what the front prints (the
 * `--once --json` report is exactly one line).
 */
export const loggerLayer = (settings: LoggingSettings): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(
      Logger.defaultLogger,
      settings.format === "json" ? Logger.withConsoleError(Logger.jsonLogger) : Logger.prettyLogger({ stderr: true })
    ),
    Logger.minimumLogLevel(settings.level)
  )

export const loggingLayer = (defaultLevel: "info" | "warn" = "info"): Layer.Layer<never, ConfigError.ConfigError> =>
  Layer.unwrapEffect(Effect.map(loggingSettingsWith(defaultLevel), loggerLayer))
