import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Fiber, Layer } from "effect"
import { TestClock } from "effect/testing"
import { type GlobalMcpServerConfig, McpConfig, type McpSettings } from "../../src/config/McpConfig"
import type { ToolResult } from "../../src/domain/ToolResult"
import { GlobalMcpConnections, GlobalMcpServersLive } from "../../src/mcp/GlobalMcpServers"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import type { Tool } from "../../src/tools/Tool"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { startDroppingServer, startHangingServer, startStreamableServer } from "../support/mcpServers/httpServers"
import { eventually, guildTurn, makeToolContext, provideToolContext, serve, waitUntil } from "../support/mcpServers/mcpTestKit"
import { text } from "../support/mcpServers/testTools"
import { pendingSleeps } from "../support/testClockSleeps"
import { makeLogCapture } from "../support/tools/logCapture"

const registryLayer = ToolRegistry.layer.pipe(Layer.provide(GuildToolSource.none))

/** The global servers layer on top of a registry that outlives it (so unregistration is observable). */
const globals = (servers: ReadonlyArray<GlobalMcpServerConfig>, settings: Partial<McpSettings> = {}) =>
  GlobalMcpServersLive.pipe(Layer.provide(McpConfig.make({ globalServers: servers, ...settings })))

/** Waits (real time) until the TestClock has a sleep due `ms` from now: the fiber has started that wait. */
const awaitSleepDue = (ms: number) =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    yield* eventually(pendingSleeps, (due) => due.some((at) => at === now + ms), `a sleep due in ${ms} ms`)
  })

const http = (name: string, url: string): GlobalMcpServerConfig => ({ name, url, transport: "streamable-http", args: [] })

const mcpTools = Effect.map(
  Effect.flatMap(ToolRegistry, (registry) => registry.all),
  (tools) => tools.filter((tool) => tool.source.kind === "mcp")
)
const toolNames = (tools: ReadonlyArray<Tool>) => tools.map((tool) => tool.name).sort()

const call = (name: string, args: Record<string, unknown>): Effect.Effect<ToolResult, never, ToolRegistry> =>
  Effect.gen(function* () {
    const { context } = yield* makeToolContext()
    return yield* Effect.flatMap(ToolRegistry, (registry) => registry.execute(name, args)).pipe(provideToolContext(context))
  })

describe("GlobalMcpServersLive (MCP_SERVERS)", () => {
  it.effect("[decision 14] the layer is ready once every server's first attempt ended: tools are there at once, a refused server costs nothing", () =>
    Effect.gen(function* () {
      const healthy = yield* serve(() => startStreamableServer())
      const down = yield* serve(startDroppingServer)
      // No polling: when the layer is built, the healthy server's tools are registered.
      yield* Layer.build(globals([http("main", healthy.url), http("down", down.url)]))
      assert.deepStrictEqual(toolNames(yield* mcpTools), ["add_numbers", "echo", "explode", "slow", "structured"])
      assert.strictEqual(down.connections(), 1, "the dead server's first attempt ended (refused) before the layer was ready")
      assert.deepStrictEqual((yield* call("add_numbers", { a: 2, b: 3 })).data, { summary: "The sum of 2 and 3 is 5." })
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("[decision 14] a hanging server holds start-up for MCP_STARTUP_WAIT_MS exactly (TestClock), not for its connect timeout", () =>
    Effect.gen(function* () {
      const hanging = yield* serve(() => startHangingServer())
      const healthy = yield* serve(() => startStreamableServer())
      const logs = yield* makeLogCapture
      const build = yield* Effect.forkChild(logs.capture(Layer.build(globals([http("slow", hanging.url), http("main", healthy.url)], { startupWait: Duration.seconds(20) }))))
      yield* waitUntil(() => healthy.log.requests.some((request) => request.method === "GET"), "the healthy server's connection")
      yield* awaitSleepDue(20_000)
      yield* TestClock.adjust(Duration.millis(19_999))
      assert.isUndefined(build.pollUnsafe(), "still waiting for the hanging server")
      yield* TestClock.adjust(Duration.millis(1))
      yield* Fiber.join(build)
      assert.strictEqual(toolNames(yield* mcpTools).length, 5, "the healthy server's tools are in when the layer is built")
      assert.strictEqual(hanging.log.requests.length, 1, "its first attempt is still pending (connect timeout 60 s)")
      const warned = yield* logs.matching("still connecting after MCP_STARTUP_WAIT_MS=20000")
      assert.strictEqual(warned.length, 1)
      assert.include(warned[0]?.message ?? "", "'slow' (http://127.0.0.1:")
      assert.strictEqual(warned[0]?.level, "WARN")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("[decision 14] a server that connects after the wait joins later, with a warning", () =>
    Effect.gen(function* () {
      let open: () => void = () => undefined
      const opened = new Promise<void>((resolve) => {
        open = resolve
      })
      const late = yield* serve(() => startStreamableServer({ beforeHandle: () => opened }))
      const logs = yield* makeLogCapture
      const build = yield* Effect.forkChild(logs.capture(Layer.build(globals([http("late", late.url)], { startupWait: Duration.seconds(5) }))))
      yield* waitUntil(() => late.log.requests.length === 1, "the first request")
      yield* awaitSleepDue(5_000)
      yield* TestClock.adjust(Duration.seconds(5))
      yield* Fiber.join(build)
      assert.deepStrictEqual(yield* mcpTools, [], "start-up went on without it")
      open()
      yield* eventually(mcpTools, (found) => found.length === 5, "the late server's tools")
      const joined = yield* eventually(logs.matching("after the start-up wait"), (lines) => lines.length === 1, "the late-join warning")
      assert.strictEqual(joined[0]?.level, "WARN")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("[decision 14] a front built on GlobalMcpConnections (the Discord login) opens after the first attempts, sharing the one connection", () =>
    Effect.gen(function* () {
      const healthy = yield* serve(() => startStreamableServer())
      const config = McpConfig.make({ globalServers: [http("main", healthy.url)] })
      const seenByFront: Array<number> = []
      // Stands in for the Discord client: built only once the connections layer is.
      const front = Layer.effectDiscard(Effect.sync(() => void seenByFront.push(healthy.log.initializes))).pipe(
        Layer.provide(GlobalMcpConnections.layer.pipe(Layer.provide(config)))
      )
      yield* Layer.build(Layer.merge(front, GlobalMcpServersLive.pipe(Layer.provide(config))))
      assert.deepStrictEqual(seenByFront, [1], "the front opened after the server's first attempt")
      assert.strictEqual(toolNames(yield* mcpTools).length, 5)
      assert.strictEqual(healthy.log.initializes, 1, "one connection, shared by both layers")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("[84] global engine names web-search / iask-search / monica-search never reach the declarations", () =>
    Effect.gen(function* () {
      const engines = ["web-search", "iask-search", "monica-search"].map((name) => ({ name, run: async () => text(name) }))
      const server = yield* serve(() => startStreamableServer({ tools: [...engines, { name: "lookup", run: async () => text("ok") }] }))
      yield* Layer.build(globals([http("engines", server.url)]))
      yield* eventually(mcpTools, (found) => found.length === 4, "registration")
      const declared = yield* Effect.flatMap(ToolRegistry, (registry) => registry.toolsForTurn(guildTurn))
      assert.deepStrictEqual(toolNames(declared), ["lookup"])
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("closing the layer's scope unregisters the tools and closes the client", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(globals([http("main", server.url)]))
          yield* eventually(mcpTools, (found) => found.length === 5, "registration")
          yield* waitUntil(() => server.log.requests.some((request) => request.method === "GET"), "the standalone stream")
        })
      )
      assert.deepStrictEqual(yield* mcpTools, [])
      yield* waitUntil(() => server.log.abandonedRequests >= 1, "the client to close its stream")
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("an expired session: the call is not replayed, the server reconnects and its tools come back", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      yield* Layer.build(globals([http("main", server.url)]))
      yield* eventually(mcpTools, (found) => found.length === 5, "registration")
      assert.isTrue((yield* call("echo", { text: "one" })).success)
      yield* Effect.promise(() => server.forgetSessions())
      const expired = yield* call("echo", { text: "two" })
      assert.isFalse(expired.success)
      assert.include(expired.error ?? "", "this call was not run")
      yield* TestClock.adjust(Duration.seconds(1))
      yield* waitUntil(() => server.log.initializes === 2, "the reconnect")
      yield* eventually(mcpTools, (found) => found.length === 5, "re-registration")
      assert.deepStrictEqual((yield* call("echo", { text: "three" })).data, { summary: "echo: three" })
      assert.deepStrictEqual(server.log.toolCalls.map((entry) => entry.args["text"]), ["one", "three"])
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("a server that is down is retried with backoff (2 s, 4 s, 8 s …) in the background", () =>
    Effect.gen(function* () {
      const server = yield* serve(startDroppingServer)
      yield* Layer.build(globals([http("down", server.url)]))
      yield* waitUntil(() => server.connections() === 1, "the first attempt")
      yield* TestClock.adjust(Duration.millis(1_999))
      assert.strictEqual(server.connections(), 1)
      yield* TestClock.adjust(Duration.millis(1))
      yield* waitUntil(() => server.connections() === 2, "the retry after 2 s")
      yield* TestClock.adjust(Duration.seconds(4))
      yield* waitUntil(() => server.connections() === 3, "the retry after 4 more s")
      assert.deepStrictEqual(yield* mcpTools, [])
    }).pipe(Effect.provide(registryLayer))
  )

  it.effect("a stdio server (operator-configured command) is spawned, used and stopped with the layer", () =>
    Effect.gen(function* () {
      const script = fileURLToPath(new URL("../support/mcpServers/stdioServer.ts", import.meta.url))
      const stdio: GlobalMcpServerConfig = { name: "local", transport: "stdio", command: process.execPath, args: ["--import", "tsx", script] }
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* Layer.build(globals([stdio]))
          const tools = yield* eventually(mcpTools, (found) => found.length === 5, "the stdio server's tools")
          assert.strictEqual(tools[0]?.source.kind === "mcp" && tools[0].source.server, "local")
          assert.deepStrictEqual((yield* call("echo", { text: "over stdio" })).data, { summary: "echo: over stdio" })
        })
      )
      assert.deepStrictEqual(yield* mcpTools, [])
    }).pipe(Effect.provide(registryLayer))
  )
})
