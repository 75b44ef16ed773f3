import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Duration, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { createServer } from "node:net"
import type { AddressInfo } from "node:net"
import { chatLayer, terminalFrontServices } from "../../src/appLayers"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { makeCollectingSink } from "../../src/chat/CollectingSink"
import { settingsProvider } from "../../src/config/dotenv"
import type { TurnInput } from "../../src/chat/TurnInput"
import { defaultOpsSettings, type OpsSettings } from "../../src/config/OpsConfig"
import { DEFAULT_PERSONA_NAME } from "../../src/config/PersonaConfig"
import { hashedGuild } from "../../src/ops/metrics"
import { telemetryLayer } from "../../src/ops/Telemetry"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { fakeOtlp, type OtlpSpan } from "../support/fakeOtlp"
import { hangingHttpServer } from "../support/hangingHttpServer"
import { makeLogCapture } from "../support/tools/logCapture"
import { startStreamableServer } from "../support/mcpServers/httpServers"
import { serve, waitUntil } from "../support/mcpServers/mcpTestKit"

const GUILD = "112233445566778899"

/** Two MCP tool calls, then the answer: a two-tool turn (the script holds two of them). */
const twoToolTurn = [
  [{ text: "Adding. " }, { toolCall: { name: "add_numbers", args: { a: 2, b: 3 } } }],
  [{ toolCall: { name: "echo", args: { text: "five" } } }],
  [{ text: "2 + 3 is 5." }, { usage: { inputTokens: 40, outputTokens: 6 } }]
]
const twoToolScript = JSON.stringify({ passes: [...twoToolTurn, ...twoToolTurn] })

const otlpSettings = (url: string): OpsSettings => ({
  ...defaultOpsSettings,
  otlp: Option.some({ endpoint: url, headers: Redacted.make({}), serviceName: "loopcord-test" })
})

const turnInput = (sink: TurnInput["openSink"]): TurnInput => ({
  channelId: "channel-1",
  guildId: GUILD,
  userId: "user-1",
  messageId: "message-1",
  isDM: false,
  locale: "en",
  persona: { id: undefined, name: DEFAULT_PERSONA_NAME, avatarUrl: undefined, systemPrompt: "Be brief." },
  loadContext: Effect.succeed([{ role: "user", content: "what is 2 + 3?" }]),
  shouldSurfaceUserErrors: true,
  openSink: sink
})

/** The app's chat layers (scripted model, a global MCP server) under the telemetry layer main provides. */
const app = (mcpUrl: string, settings: OpsSettings) => {
  const env = settingsProvider(Object.fromEntries([
    ["LLM_PROVIDER", "scripted"],
    ["LLM_SCRIPT", twoToolScript],
    ["DATABASE_URL", "sqlite::memory:"],
    ["MCP_SERVERS", JSON.stringify([{ name: "calc", url: mcpUrl }])]
  ]))
  return chatLayer("scripted", terminalFrontServices).pipe(
    Layer.provide(ConfigProvider.layer(env)),
    Layer.provideMerge(telemetryLayer(settings, { exportInterval: Duration.millis(100) }))
  )
}

const runTwoToolTurn = Effect.gen(function*() {
  const registry = yield* ToolRegistry
  // Global MCP servers connect in the background: the turn starts once their tools are registered.
  yield* Effect.repeat(registry.all, { until: (tools) => tools.some((tool) => tool.name === "echo"), schedule: Schedule.spaced(Duration.millis(20)) })
    .pipe(Effect.timeout(Duration.seconds(20)))
  const queue = yield* ChannelQueue
  const ticket = yield* queue.submit(turnInput(Effect.map(makeCollectingSink(), (collected) => ({ sink: collected.sink }))))
  return yield* ticket.result
})

const byName = (spans: ReadonlyArray<OtlpSpan>, name: string) => spans.filter((span) => span.name === name)

const ancestors = (spans: ReadonlyArray<OtlpSpan>, span: OtlpSpan): ReadonlyArray<OtlpSpan> => {
  const chain: Array<OtlpSpan> = []
  let current = spans.find((candidate) => candidate.spanId === span.parentSpanId)
  while (current !== undefined && chain.length < 50) {
    chain.push(current)
    const parentId = current.parentSpanId
    current = spans.find((candidate) => candidate.spanId === parentId)
  }
  return chain
}

/** Waits (real time) until the collector got what `condition` looks for. */
const exported = (what: string, condition: () => boolean) => waitUntil(condition, what, 20_000)

describe("OpenTelemetry over OTLP/HTTP (OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  it.live("a loopback collector gets the spans of a two-tool turn, parented turn → attempt → passes and tools → MCP calls", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const mcp = yield* serve(() => startStreamableServer())
      const result = yield* runTwoToolTurn.pipe(Effect.provide(app(mcp.url, otlpSettings(collector.url))))
      assert.strictEqual(result.status, "completed")
      assert.strictEqual(result.toolCalls.length, 2)

      yield* exported("the turn span", () => byName(collector.spans, "loopcord.turn").length === 1)
      const spans = collector.spans
      const [turn] = byName(spans, "loopcord.turn")
      assert.isDefined(turn)
      if (turn === undefined) return
      assert.isUndefined(turn.parentSpanId, "a turn is the root of its own trace")
      assert.strictEqual(turn.serviceName, "loopcord-test")
      assert.strictEqual(turn.attributes["loopcord.guild"], hashedGuild(GUILD))
      assert.notInclude(JSON.stringify(spans), GUILD, "the raw guild id is never exported")
      assert.strictEqual(turn.attributes["loopcord.turn.status"], "completed")
      assert.strictEqual(turn.attributes["gen_ai.request.model"], "scripted")

      const passes = byName(spans, "loopcord.pass")
      const tools = byName(spans, "loopcord.tool")
      const mcpCalls = byName(spans, "Mcp.callTool")
      assert.strictEqual(passes.length, 3)
      assert.deepStrictEqual(tools.map((span) => span.attributes["loopcord.tool.name"]).sort(), ["add_numbers", "echo"])
      assert.deepStrictEqual(tools.map((span) => span.attributes["loopcord.tool.status"]), ["success", "success"])
      assert.strictEqual(mcpCalls.length, 2)
      for (const span of [...passes, ...tools, ...mcpCalls]) {
        assert.strictEqual(span.traceId, turn.traceId, `${span.name} is in the turn's trace`)
        assert.include(ancestors(spans, span).map((ancestor) => ancestor.spanId), turn.spanId, `${span.name} descends from the turn`)
      }
      // Passes and tool calls are siblings under the attempt (runToolLoop); each MCP call is inside its tool call.
      const attemptIds = new Set([...passes, ...tools].map((span) => span.parentSpanId))
      assert.strictEqual(attemptIds.size, 1)
      const attempt = spans.find((span) => span.spanId === [...attemptIds][0])
      assert.strictEqual(attempt?.name, "runToolLoop")
      for (const call of mcpCalls) {
        const tool = ancestors(spans, call).find((span) => span.name === "loopcord.tool")
        assert.strictEqual(tool?.attributes["loopcord.tool.name"], call.attributes["tool"], "an MCP call sits inside its own tool call")
      }
      for (const pass of passes) {
        assert.strictEqual(pass.attributes["gen_ai.request.model"], "scripted")
        assert.strictEqual(pass.attributes["gen_ai.system"], "scripted")
      }
      assert.deepStrictEqual(passes.map((pass) => pass.attributes["loopcord.pass.outcome"]), ["tool_call", "tool_call", undefined])
    }), 60_000)

  it.live("the same turn's metrics reach the collector; its logs carry the turn's trace", () =>
    Effect.gen(function*() {
      const collector = yield* fakeOtlp
      const mcp = yield* serve(() => startStreamableServer())
      yield* runTwoToolTurn.pipe(
        Effect.tap(() => Effect.logInfo("after the turn").pipe(Effect.withSpan("a span outside the turn"))),
        Effect.provide(app(mcp.url, otlpSettings(collector.url)))
      )
      const point = (metric: string, attributes: Record<string, string>) =>
        collector.points.filter((candidate) =>
          candidate.metric === metric && Object.entries(attributes).every(([key, value]) => candidate.attributes[key] === value))
      yield* exported("the turn counter", () => point("loopcord_turns", { status: "completed" }).length > 0)
      yield* exported("tool durations", () =>
        point("loopcord_tool_duration_ms", { tool: "add_numbers", outcome: "success" }).length > 0 &&
        point("loopcord_tool_duration_ms", { tool: "echo", outcome: "success" }).length > 0)
      assert.isAtLeast(Math.max(...point("loopcord_turns", { status: "completed" }).map((p) => p.value)), 1)
      assert.isTrue(collector.points.some((p) => p.metric === "loopcord_turn_duration_ms" && p.kind === "histogram"))

      yield* exported("the logs", () => collector.logs.some((log) => log.body.startsWith("Function call completed: add_numbers")))
      const toolLog = collector.logs.find((log) => log.body.startsWith("Function call completed: add_numbers"))
      const turn = collector.spans.find((span) => span.name === "loopcord.turn")
      yield* exported("the turn span", () => collector.spans.some((span) => span.name === "loopcord.turn"))
      assert.strictEqual(toolLog?.traceId, (turn ?? collector.spans.find((span) => span.name === "loopcord.turn"))?.traceId, "a log inside the turn carries its trace id")
    }), 60_000)

  it.live("an unreachable collector: one warning, the turns complete, nothing piles up", () =>
    Effect.gen(function*() {
      // A port nobody listens on: every export is refused.
      const port = yield* Effect.promise(() =>
        new Promise<number>((resolve) => {
          const probe = createServer().listen(0, "127.0.0.1", () => {
            const free = (probe.address() as AddressInfo).port
            probe.close(() => resolve(free))
          })
        }))
      const mcp = yield* serve(() => startStreamableServer())
      const logs = yield* makeLogCapture
      const results = yield* logs.capture(
        Effect.gen(function*() {
          const first = yield* runTwoToolTurn
          // Let the exporters try (and retry) a few times.
          yield* Effect.sleep(Duration.seconds(3))
          const second = yield* runTwoToolTurn
          return [first, second]
        }).pipe(Effect.provide(app(mcp.url, otlpSettings(`http://127.0.0.1:${port}`))))
      )
      assert.deepStrictEqual(results.map((result) => result.status), ["completed", "completed"])
      const warnings = yield* logs.matching("OpenTelemetry: the collector at")
      assert.strictEqual(warnings.length, 1, JSON.stringify(warnings))
      assert.strictEqual(warnings[0]?.level, "WARN")
      assert.include(warnings[0]?.message, `127.0.0.1:${port}`)
    }), 60_000)

  it.live("a collector that never answers does not hold a turn up", () =>
    Effect.gen(function*() {
      const collector = yield* hangingHttpServer
      const mcp = yield* serve(() => startStreamableServer())
      const result = yield* Effect.gen(function*() {
        // The first export (metrics, every 100 ms) is in flight and hanging before the turn starts.
        yield* Deferred.await(collector.arrived)
        return yield* runTwoToolTurn
      }).pipe(Effect.provide(app(mcp.url, otlpSettings(collector.url.replace("/slow", "")))))
      assert.strictEqual(result.status, "completed")
    }), 60_000)
})
