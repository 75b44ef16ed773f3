/**
 * A loopback OpenTelemetry collector (OTLP/HTTP with JSON bodies) for the telemetry tests: it
 * accepts `POST /v1/traces`, `/v1/metrics` and `/v1/logs` and keeps what arrived, flattened to
 * spans, metric data points and log records. `refuse` makes it answer 503 (a collector that is
 * down but listening). Plain Node, wrapped as a scoped Effect.
 */
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { Effect } from "effect"

type AnyValue = { readonly stringValue?: string; readonly intValue?: string | number; readonly boolValue?: boolean; readonly doubleValue?: number }
type KeyValue = { readonly key: string; readonly value: AnyValue }

export interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>
  readonly serviceName: string | undefined
}

export interface OtlpDataPoint {
  readonly metric: string
  readonly kind: "sum" | "gauge" | "histogram" | "other"
  readonly attributes: Readonly<Record<string, string | number | boolean | undefined>>
  /** The value of a sum or gauge point; the count of a histogram point. */
  readonly value: number
}

export interface OtlpLog {
  readonly body: string
  readonly traceId: string | undefined
  readonly spanId: string | undefined
}

export interface FakeOtlp {
  readonly url: string
  readonly spans: Array<OtlpSpan>
  readonly points: Array<OtlpDataPoint>
  readonly logs: Array<OtlpLog>
  /** Requests per signal path. */
  readonly requests: Map<string, number>
  refuse: boolean
  readonly close: () => Promise<void>
}

const valueOf = (value: AnyValue | undefined) =>
  value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue)) ?? value?.boolValue ?? value?.doubleValue

const attributesOf = (list: ReadonlyArray<KeyValue> | undefined) =>
  Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]))

interface RawSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly attributes?: ReadonlyArray<KeyValue>
}
interface RawPoint {
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly asInt?: string | number
  readonly asDouble?: number
  readonly count?: string | number
}
interface RawMetric {
  readonly name: string
  readonly sum?: { readonly dataPoints?: ReadonlyArray<RawPoint> }
  readonly gauge?: { readonly dataPoints?: ReadonlyArray<RawPoint> }
  readonly histogram?: { readonly dataPoints?: ReadonlyArray<RawPoint> }
}
interface RawLog {
  readonly body?: AnyValue
  readonly traceId?: string
  readonly spanId?: string
}
/** The parts of the three OTLP JSON export bodies this fake reads. */
interface ExportBody {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: ReadonlyArray<RawSpan> }>
  }>
  readonly resourceMetrics?: ReadonlyArray<{ readonly scopeMetrics?: ReadonlyArray<{ readonly metrics?: ReadonlyArray<RawMetric> }> }>
  readonly resourceLogs?: ReadonlyArray<{ readonly scopeLogs?: ReadonlyArray<{ readonly logRecords?: ReadonlyArray<RawLog> }> }>
}

const readJson = async (request: IncomingMessage): Promise<ExportBody> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString("utf8")) as ExportBody
}

export const startFakeOtlp = async (): Promise<FakeOtlp> => {
  const spans: Array<OtlpSpan> = []
  const points: Array<OtlpDataPoint> = []
  const logs: Array<OtlpLog> = []
  const requests = new Map<string, number>()
  const server = createServer((request, response) => {
    const path = request.url ?? "/"
    requests.set(path, (requests.get(path) ?? 0) + 1)
    readJson(request).then((body) => {
      if (fake.refuse) {
        response.writeHead(503).end()
        return
      }
      if (path === "/v1/traces") {
        for (const resource of body.resourceSpans ?? []) {
          const serviceName = attributesOf(resource.resource?.attributes)["service.name"]
          for (const scope of resource.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              spans.push({
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId === "" ? undefined : span.parentSpanId,
                name: span.name,
                attributes: attributesOf(span.attributes),
                serviceName: typeof serviceName === "string" ? serviceName : undefined
              })
            }
          }
        }
      } else if (path === "/v1/metrics") {
        for (const resource of body.resourceMetrics ?? []) {
          for (const scope of resource.scopeMetrics ?? []) {
            for (const metric of scope.metrics ?? []) {
              const kind: OtlpDataPoint["kind"] = metric.sum !== undefined ? "sum" : metric.gauge !== undefined ? "gauge" : metric.histogram !== undefined ? "histogram" : "other"
              const data = metric.sum ?? metric.gauge ?? metric.histogram ?? { dataPoints: [] }
              for (const point of data.dataPoints ?? []) {
                points.push({
                  metric: metric.name,
                  kind,
                  attributes: attributesOf(point.attributes),
                  value: Number(kind === "histogram" ? point.count : point.asInt ?? point.asDouble ?? 0)
                })
              }
            }
          }
        }
      } else if (path === "/v1/logs") {
        for (const resource of body.resourceLogs ?? []) {
          for (const scope of resource.scopeLogs ?? []) {
            for (const record of scope.logRecords ?? []) {
              logs.push({
                body: String(valueOf(record.body) ?? ""),
                traceId: record.traceId === "" ? undefined : record.traceId,
                spanId: record.spanId === "" ? undefined : record.spanId
              })
            }
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}")
    }, () => response.writeHead(400).end())
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const fake: FakeOtlp = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    points,
    logs,
    requests,
    refuse: false,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  return fake
}

export const fakeOtlp = Effect.acquireRelease(Effect.promise(startFakeOtlp), (fake) => Effect.promise(() => fake.close()))
