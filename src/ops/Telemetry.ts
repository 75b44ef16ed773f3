import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientError from "effect/http/HttpClientError"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Duration, Effect, Layer, Option, Redacted, Ref, References } from "effect"
import { type OpsSettings, type OtlpSettings } from "../config/OpsConfig"
import { Instrumentation } from "./Instrumentation"
import { observedTurnsLayer } from "./observedTurns"

/** One export request at most this long: a collector that never answers cannot pile up requests. */
const EXPORT_REQUEST_TIMEOUT = Duration.seconds(10)

/** Header names whose values never reach a span attribute (the platform's list plus vendor key headers). */
const REDACTED_HEADER_NAMES: ReadonlyArray<string | RegExp> = [
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "x-goog-api-key",
  "api-key",
  "x-subscription-token",
  /token|secret|key|auth/i
]

interface TelemetryOptions {
  readonly serviceVersion?: string
  /** Export intervals (tests shorten them); the library's defaults otherwise. */
  readonly exportInterval?: Duration.Input
}

const describeTransportError = (error: HttpClientError.HttpClientError): string => {
  const cause: unknown = error.reason.cause
  const inner: unknown = cause instanceof Error && cause.cause instanceof Error ? cause.cause : cause
  if (inner instanceof Error) return inner.message
  return error.reason.description ?? error.reason._tag
}

/**
 * The HttpClient the exporters post with. An unreachable or refusing collector is reported with
 * one warning (and one line when it answers again): the exporter then drops what it holds for a
 * minute, and nothing waits on it, so turns are never slowed. Its lines are logged at the
 * program's level, also from the exporters' fibers (whose own warnings are off, see otlpLayer).
 */
const exporterClient = (endpoint: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const level = yield* References.MinimumLogLevel
      const atProgramLevel = <A>(log: Effect.Effect<A>) => Effect.provideService(log, References.MinimumLogLevel, level)
      const failing = yield* Ref.make(false)
      const failed = (why: string) =>
        Effect.flatMap(Ref.getAndSet(failing, true), (already) =>
          already
            ? Effect.void
            : atProgramLevel(Effect.logWarning(`OpenTelemetry: the collector at ${endpoint} ${why}; telemetry is dropped until it answers`)))
      const answered = Effect.flatMap(Ref.getAndSet(failing, false), (was) =>
        was ? atProgramLevel(Effect.logInfo(`OpenTelemetry: the collector at ${endpoint} answers again`)) : Effect.void)
      return client.pipe(
        HttpClient.transform((response, request) =>
          Effect.timeoutOrElse(response, {
            duration: EXPORT_REQUEST_TIMEOUT,
            orElse: () =>
              Effect.fail(
                new HttpClientError.HttpClientError({ reason: new HttpClientError.TransportError({ request, description: "no answer" }) })
              )
          }).pipe(Effect.provideService(HttpClient.TracerPropagationEnabled, false))),
        HttpClient.tap((response) => (response.status < 300 ? answered : failed(`answered HTTP ${response.status}`))),
        HttpClient.tapError((error) => failed(`cannot be reached (${describeTransportError(error)})`))
      )
    })
  ).pipe(Layer.provide(NodeHttpClient.layerUndici))

/**
 * OTLP/HTTP (JSON) traces, metrics and logs to `otlp.endpoint`; loaded only when configured.
 * The exporters log below errors only: each would warn, with the cause, every minute the
 * collector is down, where exporterClient says it once.
 */
const otlpLayer = (otlp: OtlpSettings, options: TelemetryOptions) =>
  Layer.unwrap(
    Effect.map(Effect.promise(() => import("effect/observability/Otlp")), (Otlp) =>
      Otlp.layerJson({
        baseUrl: otlp.endpoint,
        resource: {
          serviceName: otlp.serviceName,
          ...(options.serviceVersion === undefined ? {} : { serviceVersion: options.serviceVersion })
        },
        headers: Redacted.value(otlp.headers),
        shutdownTimeout: Duration.seconds(3),
        ...(options.exportInterval === undefined
          ? {}
          : {
            tracerExportInterval: options.exportInterval,
            metricsExportInterval: options.exportInterval,
            loggerExportInterval: options.exportInterval
          })
      }).pipe(
        Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error")),
        Layer.provide(exporterClient(otlp.endpoint))
      ))
  )

/**
 * Telemetry for the whole program (`OTEL_*`, `HEALTH_PORT`): Instrumentation (what is recorded)
 * and the turn observer for every front (both References), plus the OTLP exporters when an
 * endpoint is set. No trace context ever leaves in a request, and credential headers never land
 * in span attributes.
 */
export const telemetryLayer = (settings: OpsSettings, options: TelemetryOptions = {}): Layer.Layer<never> => {
  const tracing = Option.isSome(settings.otlp)
  const instrumentation = Layer.succeed(Instrumentation, { tracing, metrics: tracing || Option.isSome(settings.healthPort) })
  const observed = observedTurnsLayer.pipe(Layer.provideMerge(instrumentation))
  if (Option.isNone(settings.otlp)) return observed
  return Layer.mergeAll(
    observed,
    otlpLayer(settings.otlp.value, options),
    Layer.succeed(HttpClient.TracerPropagationEnabled, false),
    Layer.succeed(Headers.CurrentRedactedNames, REDACTED_HEADER_NAMES)
  )
}
