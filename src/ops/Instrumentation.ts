import { Context } from "effect"

/**
 * Whether this process records traces and metrics: tracing when an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT`) is configured, metrics when anything reads them (OTLP or the
 * health server's /metrics). Decorators read it once, when their service is built: with both off
 * they hand back the undecorated service, so a turn pays nothing for instrumentation it does not
 * use.
 */
export interface InstrumentationShape {
  readonly tracing: boolean
  readonly metrics: boolean
}

export const Instrumentation = Context.Reference<InstrumentationShape>("loopcord/ops/Instrumentation", {
  defaultValue: (): InstrumentationShape => ({ tracing: false, metrics: false })
})
