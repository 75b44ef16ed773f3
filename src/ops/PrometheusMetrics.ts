import { Context, Effect, Layer } from "effect"

/** `/metrics`: the process's Effect metrics as Prometheus text. */
export class PrometheusMetrics extends Context.Service<PrometheusMetrics, {
  readonly scrape: Effect.Effect<string>
}>()("loopcord/ops/PrometheusMetrics") {
  /**
   * The OpenTelemetry Prometheus exporter (its own server off) reading Effect's metrics through
   * @effect/opentelemetry's bridge; the exporter's serializer writes the text. Loaded on first use
   * of the layer only.
   */
  static readonly layer: Layer.Layer<PrometheusMetrics> = Layer.effect(
    PrometheusMetrics,
    Effect.gen(function*() {
      const [{ PrometheusExporter, PrometheusSerializer }, Metrics, Resource] = yield* Effect.promise(() =>
        Promise.all([
          import("@opentelemetry/exporter-prometheus"),
          import("@effect/opentelemetry/OtelMetrics"),
          import("@effect/opentelemetry/Resource")
        ])
      )
      const exporter = new PrometheusExporter({ preventServerStart: true })
      const producer = yield* Metrics.makeProducer().pipe(Effect.provide(Resource.layer({ serviceName: "loopcord" })))
      yield* Metrics.registerProducer(producer, () => exporter)
      // Without the otel_scope_* labels: every series here comes from the one Effect bridge.
      const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)
      const scrape = Effect.map(Effect.promise(() => exporter.collect()), ({ resourceMetrics }) => serializer.serialize(resourceMetrics))
      return { scrape }
    })
  )
}
