import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Metric } from "effect"
import { createServer, type Server } from "node:net"
import type { AddressInfo } from "node:net"
import { healthServerLayer } from "../../src/ops/HealthServer"
import { turnsTotal } from "../../src/ops/metrics"
import { Readiness } from "../../src/ops/Readiness"
import { makeLogCapture } from "../support/tools/logCapture"

/** The health server on a free loopback port with a readiness registry expecting `a` and `b`; returns its base URL. */
const startHealth = Effect.gen(function*() {
  const logs = yield* makeLogCapture
  const context = yield* logs.capture(Layer.build(
    healthServerLayer({ host: "127.0.0.1", port: 0 }).pipe(Layer.provideMerge(Readiness.layer(["a", "b"])))
  ))
  const [line] = yield* logs.matching("Health server listening on")
  const url = /http:\/\/[\d.]+:\d+/.exec(line?.message ?? "")?.[0]
  assert.isDefined(url, line?.message)
  return { url: url ?? "", readiness: Context.get(context, Readiness) }
})

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type") ?? "", body: await response.text() }
  })

describe("the health server (HEALTH_PORT)", () => {
  it.live("/healthz answers while /readyz waits for every expected part, and flips when they pass", () =>
    Effect.gen(function*() {
      const { readiness, url } = yield* startHealth
      const alive = yield* get(`${url}/healthz`)
      assert.deepStrictEqual([alive.status, alive.body], [200, "ok\n"])

      const starting = yield* get(`${url}/readyz`)
      assert.strictEqual(starting.status, 503)
      assert.deepStrictEqual(JSON.parse(starting.body), { ready: false, checks: { a: "starting", b: "starting" } })

      yield* readiness.register("a", Effect.void)
      yield* readiness.register("b", Effect.fail("b is down"))
      const partly = yield* get(`${url}/readyz`)
      assert.strictEqual(partly.status, 503)
      assert.deepStrictEqual(JSON.parse(partly.body).checks, { a: "ok", b: "b is down" })

      yield* readiness.register("b", Effect.void)
      const ready = yield* get(`${url}/readyz`)
      assert.deepStrictEqual([ready.status, JSON.parse(ready.body)], [200, { ready: true, checks: { a: "ok", b: "ok" } }])

      // A check that hangs (a dead database) makes /readyz answer "not ready" in bounded time.
      yield* readiness.register("b", Effect.never)
      const hung = yield* get(`${url}/readyz`)
      assert.deepStrictEqual([hung.status, JSON.parse(hung.body).checks.b], [503, "no answer within 2 s"])
      assert.strictEqual((yield* get(`${url}/nowhere`)).status, 404)
    }), 30_000)

  it.live("/metrics is Prometheus text from the OpenTelemetry exporter, with loopcord's metrics", () =>
    Effect.gen(function*() {
      const { url } = yield* startHealth
      yield* Metric.update(Metric.withAttributes(turnsTotal, { status: "completed" }), 1)
      const scraped = yield* get(`${url}/metrics`)
      assert.strictEqual(scraped.status, 200)
      assert.match(scraped.type, /^text\/plain; version=0\.0\.4/)
      assert.match(scraped.body, /^# TYPE loopcord_turns_total counter$/m)
      assert.match(scraped.body, /^loopcord_turns_total\{status="completed"\} [1-9]\d*/m)
    }), 30_000)

  it.live("a port already in use stops start-up with one line", () =>
    Effect.gen(function*() {
      const occupied = yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<Server>((resolve) => {
          const server = createServer().listen(0, "127.0.0.1", () => resolve(server))
        })),
        (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const port = (occupied.address() as AddressInfo).port
      const error = yield* Effect.flip(Layer.build(healthServerLayer({ host: "127.0.0.1", port }).pipe(Layer.provide(Readiness.layer([])))))
      assert.strictEqual(error.message, `HEALTH_PORT ${port}: 127.0.0.1:${port} is already in use by another process; choose a free port or unset HEALTH_PORT`)
    }))
})
