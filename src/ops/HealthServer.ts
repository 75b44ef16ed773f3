import * as HttpMiddleware from "effect/http/HttpMiddleware"
import * as HttpServer from "effect/http/HttpServer"
import * as HttpServerRequest from "effect/http/HttpServerRequest"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Data, Effect, Layer } from "effect"
import { createServer } from "node:http"
import { PrometheusMetrics } from "./PrometheusMetrics"
import { Readiness } from "./Readiness"

/** The health server could not start; the message is the one start-up line. */
export class HealthServerError extends Data.TaggedError("HealthServerError")<{
  readonly host: string
  readonly port: number
  readonly detail: string
}> {
  override get message(): string {
    return `HEALTH_PORT ${this.port}: ${this.detail}`
  }
}

const listenFailure = (host: string, port: number) => (error: unknown) => {
  const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : error
  const code = typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined
  const detail = code === "EADDRINUSE"
    ? `${host}:${port} is already in use by another process; choose a free port or unset HEALTH_PORT`
    : code === "EACCES"
    ? `not allowed to listen on ${host}:${port} (ports below 1024 need privileges); choose a port above 1024`
    : `cannot listen on ${host}:${port}: ${cause instanceof Error ? cause.message : String(cause)}`
  return new HealthServerError({ host, port, detail })
}

/** The routes (GET only; anything else is 404): `/healthz` alive, `/readyz` every expected part ready, `/metrics` Prometheus text. */
const routes: Readonly<Record<string, Effect.Effect<HttpServerResponse.HttpServerResponse, never, Readiness | PrometheusMetrics>>> = {
  "/healthz": Effect.succeed(HttpServerResponse.text("ok\n")),
  "/readyz": Effect.map(Effect.flatMap(Readiness, (readiness) => readiness.report), (report) =>
    HttpServerResponse.jsonUnsafe(report, { status: report.ready ? 200 : 503 })),
  "/metrics": Effect.map(Effect.flatMap(PrometheusMetrics, (metrics) => metrics.scrape), (text) =>
    HttpServerResponse.text(text, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))
}

const notFound = Effect.succeed(HttpServerResponse.empty({ status: 404 }))

const healthRoutes = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
  const path = request.url.split("?", 1)[0] ?? ""
  return request.method === "GET" && Object.hasOwn(routes, path) ? routes[path] ?? notFound : notFound
})

/**
 * `HEALTH_PORT`: the platform HttpServer with the health routes, for the orchestrator and the
 * metrics scraper. Requests to it are not traced (a probe every few seconds is not telemetry).
 * A port already in use fails start-up with one line.
 */
export const healthServerLayer = (options: { readonly host: string; readonly port: number }): Layer.Layer<never, HealthServerError, Readiness> =>
  Layer.merge(
    HttpServer.serve(healthRoutes).pipe(
      Layer.provide(Layer.merge(PrometheusMetrics.layer, Layer.succeed(HttpMiddleware.TracerDisabledWhen, () => true)))
    ),
    Layer.effectDiscard(
      HttpServer.addressFormattedWith((address) => Effect.logInfo(`Health server listening on ${address} (/healthz, /readyz, /metrics)`))
    )
  ).pipe(
    Layer.provide(
      Layer.effectContext(Effect.mapError(
        Layer.build(NodeHttpServer.layer(() => createServer(), { host: options.host, port: options.port })),
        listenFailure(options.host, options.port)
      ))
    )
  )
