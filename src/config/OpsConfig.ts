import { Config, Context, Duration, Result, Layer, Option, Redacted } from "effect"
import { integerConfig, millisSetting } from "./settings"
import { invalidSetting, mapOrFail } from "./settingError"

/** Where traces, metrics and logs go over OTLP/HTTP, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. */
export interface OtlpSettings {
  /** The collector's base URL; `/v1/traces`, `/v1/metrics` and `/v1/logs` are appended. */
  readonly endpoint: string
  /** `OTEL_EXPORTER_OTLP_HEADERS` (`key=value,…`), e.g. an authorization header; never logged. */
  readonly headers: Redacted.Redacted<Readonly<Record<string, string>>>
  readonly serviceName: string
}

/** Operations settings (docs/architecture.md, Stores and operations). */
export interface OpsSettings {
  readonly otlp: Option.Option<OtlpSettings>
  /** `HEALTH_PORT`: /healthz, /readyz and /metrics; none ⇒ no health server. 0 picks a free port. */
  readonly healthPort: Option.Option<number>
  readonly healthHost: string
  /** How long running turns may go on after SIGTERM/SIGINT before they are stopped. */
  readonly shutdownGrace: Duration.Duration
}

export const defaultOpsSettings: OpsSettings = {
  otlp: Option.none(),
  healthPort: Option.none(),
  healthHost: "0.0.0.0",
  shutdownGrace: Duration.millis(15_000)
}

const optionalText = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.String(name)).pipe(Config.map((value) => Option.filter(Option.map(value, (raw) => raw.trim()), (raw) => raw.length > 0)))

const endpoint = optionalText("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(
  mapOrFail((value) => {
    if (Option.isNone(value)) return Result.succeed(Option.none<string>())
    const url = URL.canParse(value.value) ? new URL(value.value) : undefined
    return url !== undefined && (url.protocol === "http:" || url.protocol === "https:")
      ? Result.succeed(Option.some(value.value.replace(/\/+$/, "")))
      : Result.fail(invalidSetting("OTEL_EXPORTER_OTLP_ENDPOINT", `must be the collector's http(s) base URL such as http://otel-collector:4318 (got "${value.value}")`))
  })
)

/** The OpenTelemetry convention: `key=value` pairs, comma-separated, values percent-encoded. */
export const parseOtlpHeaders = (raw: string): Result.Result<Readonly<Record<string, string>>, string> => {
  const headers: Record<string, string> = {}
  for (const [index, pair] of raw.split(",").entries()) {
    if (pair.trim() === "") continue
    const separator = pair.indexOf("=")
    const key = separator < 0 ? "" : pair.slice(0, separator).trim()
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(key)) return Result.fail(`entry ${index + 1} is not key=value`)
    const value = pair.slice(separator + 1).trim()
    try {
      headers[key.toLowerCase()] = decodeURIComponent(value)
    } catch {
      return Result.fail(`entry ${index + 1} (${key}) is not valid percent-encoding`)
    }
  }
  return Result.succeed(headers)
}

const headers = Config.option(Config.Redacted("OTEL_EXPORTER_OTLP_HEADERS")).pipe(
  mapOrFail((value) =>
    Option.match(value, {
      onNone: () => Result.succeed(Redacted.make<Readonly<Record<string, string>>>({})),
      onSome: (secret) =>
        Result.mapBoth(parseOtlpHeaders(Redacted.value(secret)), {
          // The message never repeats the value: it may be a credential.
          onFailure: (detail) => invalidSetting("OTEL_EXPORTER_OTLP_HEADERS", `must be key=value pairs separated by commas: ${detail}`),
          onSuccess: (parsed) => Redacted.make(parsed)
        })
    })
  )
)

const healthPort = Config.option(integerConfig("HEALTH_PORT")).pipe(
  mapOrFail((port) =>
    Option.isSome(port) && (port.value < 0 || port.value > 65_535)
      ? Result.fail(invalidSetting("HEALTH_PORT", `must be a TCP port, 0 to 65535 (got ${port.value})`))
      : Result.succeed(port)
  )
)

/** Every operations variable, validated (the telemetry layer and OpsConfig.layer read this). */
export const opsSettings: Config.Config<OpsSettings> = Config.all({
  endpoint,
  headers,
  serviceName: optionalText("OTEL_SERVICE_NAME").pipe(Config.map(Option.getOrElse(() => "loopcord"))),
  healthPort,
  healthHost: optionalText("HEALTH_HOST").pipe(Config.map(Option.getOrElse(() => defaultOpsSettings.healthHost))),
  shutdownGrace: millisSetting("SHUTDOWN_GRACE_MS", { default: 15_000, min: 0 })
}).pipe(
  Config.map(({ endpoint, headers, healthHost, healthPort, serviceName, shutdownGrace }): OpsSettings => ({
    otlp: Option.map(endpoint, (url) => ({ endpoint: url, headers, serviceName })),
    healthPort,
    healthHost,
    shutdownGrace
  }))
)

export class OpsConfig extends Context.Service<OpsConfig, OpsSettings>()("loopcord/config/OpsConfig") {
  static readonly layer = Layer.effect(OpsConfig, opsSettings)
  /** Defaults with overrides, for tests and embedding. */
  static readonly make = (overrides: Partial<OpsSettings> = {}) => Layer.succeed(OpsConfig, { ...defaultOpsSettings, ...overrides })
}

