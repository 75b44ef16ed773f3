import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Ref } from "effect"
import { TestClock } from "effect/testing"
import type { ToolResult } from "../../src/domain/ToolResult"
import { GuildMcpAdmin } from "../../src/mcp/GuildMcpAdmin"
import { GuildMcpTools } from "../../src/mcp/GuildMcpTools"
import type { Tool } from "../../src/tools/Tool"
import { registerAll, ToolRegistry } from "../../src/tools/ToolRegistry"
import { rawTool } from "../support/tools/testTools"
import { deadPortUrl, startStreamableServer, type StreamableTestServer } from "../support/mcpServers/httpServers"
import {
  guildServer,
  guildTurn,
  makeToolContext,
  provideToolContext,
  registryWithGuildMcp,
  serve,
  waitUntil
} from "../support/mcpServers/mcpTestKit"
import { text, type TestTool } from "../support/mcpServers/testTools"

const builtins: ReadonlyArray<Tool> = [
  rawTool({ name: "fetch_url", category: "search" }),
  rawTool({ name: "web_search", category: "search" }),
  rawTool({ name: "manage_message", category: "discord" })
]

const fetchTool: TestTool = {
  name: "fetch",
  description: "Fetches a URL",
  inputSchema: { properties: { url: { type: "string", format: "uri" } }, required: ["url"] },
  run: async (args) => text(`fetched ${String(args["url"])}`)
}
const searchTool: TestTool = {
  name: "search",
  description: "Searches the web",
  inputSchema: { properties: { query: { type: "string" } } },
  run: async (args) => text(`results for ${String(args["query"])}`)
}
const tool = (name: string): TestTool => ({ name, run: async () => text(name) })

const names = (tools: ReadonlyArray<Tool>) => tools.map((entry) => entry.name).sort()
const mcpNames = (tools: ReadonlyArray<Tool>) => names(tools.filter((entry) => entry.source.kind === "mcp"))

/** Registers the built-ins, then answers toolsForTurn for guild-1. */
const declaredTools = Effect.gen(function* () {
  const registry = yield* ToolRegistry
  yield* registerAll(registry, builtins)
  return yield* registry.toolsForTurn(guildTurn)
})

describe("GuildMcpTools exposure (spec §6.3)", () => {
  it.effect("[82] a guild url_fetcher providing `fetch` hides the built-in fetch_url; a name colliding with a built-in is dropped", () =>
    Effect.gen(function* () {
      const fetcher = yield* serve(() => startStreamableServer({ tools: [fetchTool] }))
      const generic = yield* serve(() => startStreamableServer({ tools: [tool("manage_message"), tool("weather")] }))
      const registrations = [
        guildServer({ name: "fetcher", type: "url_fetcher", url: fetcher.url }),
        guildServer({ name: "misc", url: generic.url })
      ]
      const tools = yield* declaredTools.pipe(Effect.provide(registryWithGuildMcp({ registrations }).layer))
      assert.deepStrictEqual(names(tools), ["fetch", "manage_message", "weather", "web_search"])
      assert.deepStrictEqual(mcpNames(tools), ["fetch", "weather"])
      assert.strictEqual(tools.find((entry) => entry.name === "manage_message")?.source.kind, "builtin")
      const fetch = tools.find((entry) => entry.name === "fetch")
      assert.deepStrictEqual(fetch?.source, { kind: "mcp", scope: "guild", server: "fetcher" })
      assert.isTrue(fetch?.requiresFollowUp)
    })
  )

  it.effect("[83] without guild replacements web_search and fetch_url remain and there are no MCP tools", () =>
    Effect.gen(function* () {
      const tools = yield* declaredTools.pipe(Effect.provide(registryWithGuildMcp().layer))
      assert.deepStrictEqual(names(tools), ["fetch_url", "manage_message", "web_search"])
      assert.deepStrictEqual(mcpNames(tools), [])
    })
  )

  it.effect("a guild web_search server hides the built-in web_search; {url_fetch_tool} stays fetch_url", () =>
    Effect.gen(function* () {
      const search = yield* serve(() => startStreamableServer({ tools: [searchTool] }))
      const registrations = [guildServer({ name: "searcher", type: "web_search", url: search.url })]
      const layer = registryWithGuildMcp({ registrations }).layer
      const tools = yield* declaredTools.pipe(Effect.provide(layer))
      assert.deepStrictEqual(names(tools), ["fetch_url", "manage_message", "search"])
      const macro = yield* Effect.flatMap(GuildMcpTools, (source) => source.urlFetchToolName("guild-1")).pipe(Effect.provide(layer))
      assert.strictEqual(macro, "fetch_url")
    })
  )

  it.effect("{url_fetch_tool} resolves to the guild url_fetcher function", () =>
    Effect.gen(function* () {
      const fetcher = yield* serve(() => startStreamableServer({ tools: [tool("summarize"), fetchTool] }))
      const registrations = [guildServer({ name: "fetcher", type: "url_fetcher", url: fetcher.url })]
      const set = yield* Effect.flatMap(GuildMcpTools, (source) => source.forGuild("guild-1")).pipe(
        Effect.provide(registryWithGuildMcp({ registrations }).layer)
      )
      assert.strictEqual(set.urlFetchTool, "fetch")
      assert.deepStrictEqual(set.hiddenBuiltins, ["fetch_url"])
      // Deliberate tool mode reads which guild tools stand in for the hidden built-in from here.
      assert.deepStrictEqual(set.replacements, new Map([["fetch_url", ["summarize", "fetch"]]]))
    })
  )

  it.effect("a name provided by two enabled servers is not routed; a reserved name is only for its own family", () =>
    Effect.gen(function* () {
      const a = yield* serve(() => startStreamableServer({ tools: [tool("shared"), tool("only_a"), tool("fetch_url")] }))
      const b = yield* serve(() => startStreamableServer({ tools: [tool("shared"), tool("only_b")] }))
      const registrations = [guildServer({ name: "a", url: a.url }), guildServer({ name: "b", url: b.url })]
      const tools = yield* declaredTools.pipe(Effect.provide(registryWithGuildMcp({ registrations }).layer))
      assert.deepStrictEqual(mcpNames(tools), ["only_a", "only_b"])
      assert.strictEqual(tools.find((entry) => entry.name === "fetch_url")?.source.kind, "builtin")
    })
  )

  it.effect("two enabled url_fetcher servers replace nothing: fetch_url stays", () =>
    Effect.gen(function* () {
      const a = yield* serve(() => startStreamableServer({ tools: [fetchTool] }))
      const b = yield* serve(() => startStreamableServer({ tools: [tool("read_page")] }))
      const registrations = [
        guildServer({ name: "a", type: "url_fetcher", url: a.url }),
        guildServer({ name: "b", type: "url_fetcher", url: b.url })
      ]
      const tools = yield* declaredTools.pipe(Effect.provide(registryWithGuildMcp({ registrations }).layer))
      assert.deepStrictEqual(names(tools), ["fetch", "fetch_url", "manage_message", "read_page", "web_search"])
    })
  )

  it.effect("a disabled server is never dialed; an unreachable one only drops its own tools", () =>
    Effect.gen(function* () {
      const healthy = yield* serve(() => startStreamableServer({ tools: [tool("weather")] }))
      const disabled = yield* serve(() => startStreamableServer({ tools: [tool("secret")] }))
      const dead = yield* Effect.promise(deadPortUrl)
      const registrations = [
        guildServer({ name: "healthy", url: healthy.url }),
        guildServer({ name: "off", url: disabled.url, enabled: false }),
        guildServer({ name: "dead", type: "url_fetcher", url: dead })
      ]
      const tools = yield* declaredTools.pipe(Effect.provide(registryWithGuildMcp({ registrations }).layer))
      assert.deepStrictEqual(names(tools), ["fetch_url", "manage_message", "weather", "web_search"])
      assert.strictEqual(disabled.log.requests.length, 0)
    })
  )
})

describe("GuildMcpTools execution (spec §6.5)", () => {
  interface Kit {
    readonly server: StreamableTestServer
    readonly call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>
    readonly controller: AbortController
    readonly progress: Ref.Ref<ReadonlyArray<string>>
  }

  const withServer = <A, E>(
    tools: ReadonlyArray<TestTool> | undefined,
    body: (kit: Kit) => Effect.Effect<A, E, ToolRegistry | GuildMcpAdmin | GuildMcpTools>
  ) =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer(tools === undefined ? {} : { tools }))
      const registration = guildServer({ url: server.url })
      return yield* Effect.gen(function* () {
        const { context, controller, progress } = yield* makeToolContext()
        const registry = yield* ToolRegistry
        const call = (name: string, args: Record<string, unknown>): Effect.Effect<ToolResult> =>
          registry.execute(name, args).pipe(provideToolContext(context))
        return yield* body({ server, call, controller, progress })
      }).pipe(Effect.provide(registryWithGuildMcp({ registrations: [registration] }).layer))
    })

  it.effect("success: data.summary is the joined text; a progress notice is shown", () =>
    withServer(undefined, ({ call, progress, server }) =>
      Effect.gen(function* () {
        const result = yield* call("echo", { text: "hi" })
        assert.deepStrictEqual(result, { success: true, data: { summary: "echo: hi" } })
        assert.deepStrictEqual(server.log.toolCalls, [{ name: "echo", args: { text: "hi" } }])
        assert.deepStrictEqual(yield* Ref.get(progress), ["Using echo (tools)"])
      })
    )
  )

  it.effect("isError: a failure carrying the joined text", () =>
    withServer(undefined, ({ call }) =>
      Effect.gen(function* () {
        const result = yield* call("explode", {})
        assert.isFalse(result.success)
        assert.strictEqual(result.error, "kaboom\nthe tool broke")
      })
    )
  )

  it.effect("structured content only: data.summary is its JSON", () =>
    withServer(undefined, ({ call }) =>
      Effect.gen(function* () {
        const result = yield* call("structured", {})
        assert.deepStrictEqual(result.data, { summary: JSON.stringify({ temperature: 21, unit: "C" }) })
      })
    )
  )

  it.effect("a call past GUILD_MCP_EXECUTION_TIMEOUT_MS fails after exactly 30 s and its HTTP request is closed", () =>
    withServer(undefined, ({ call, server }) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(call("slow", {}))
        yield* waitUntil(() => server.log.toolCalls.length === 1, "the slow call to start")
        yield* TestClock.adjust(Duration.millis(29_999))
        assert.strictEqual(server.log.closedCallRequests, 0)
        yield* TestClock.adjust(Duration.millis(1))
        const result = yield* Fiber.join(fiber)
        assert.isFalse(result.success)
        assert.strictEqual(result.error, "MCP tool 'slow' on 'tools' failed: timed out")
        assert.include(result.detail ?? "", "no result within 30 s")
        yield* waitUntil(() => server.log.closedCallRequests === 1, "the call's HTTP request to close")
        yield* waitUntil(() => server.log.cancelledCalls === 1, "notifications/cancelled")
        assert.strictEqual(server.log.finishedCalls, 0)
      })
    )
  )

  it.effect("kill during a call (the tool fiber is interrupted) closes the call's HTTP request on the server", () =>
    withServer(undefined, ({ call, server }) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(call("slow", {}))
        yield* waitUntil(() => server.log.toolCalls.length === 1, "the slow call to start")
        yield* Fiber.interrupt(fiber)
        yield* waitUntil(() => server.log.closedCallRequests === 1, "the call's HTTP request to close")
        yield* waitUntil(() => server.log.cancelledCalls === 1, "notifications/cancelled")
        assert.strictEqual(server.log.finishedCalls, 0)
        // The session survives a killed call.
        assert.deepStrictEqual((yield* call("echo", { text: "after" })).data, { summary: "echo: after" })
        assert.strictEqual(server.log.initializes, 1)
      })
    )
  )

  it.effect("the turn's AbortSignal also cancels the call on the wire", () =>
    withServer(undefined, ({ call, controller, server }) =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(call("slow", {}))
        yield* waitUntil(() => server.log.toolCalls.length === 1, "the slow call to start")
        controller.abort()
        const result = yield* Fiber.join(fiber)
        assert.isFalse(result.success)
        yield* waitUntil(() => server.log.closedCallRequests === 1, "the call's HTTP request to close")
      })
    )
  )

  it.effect("an expired session (404) is re-established once and the call is not replayed", () =>
    withServer(undefined, ({ call, server }) =>
      Effect.gen(function* () {
        assert.isTrue((yield* call("echo", { text: "one" })).success)
        yield* Effect.promise(() => server.forgetSessions())
        const expired = yield* call("echo", { text: "two" })
        assert.isFalse(expired.success)
        assert.include(expired.error ?? "", "this call was not run")
        assert.strictEqual(server.log.initializes, 2, "one new session")
        assert.deepStrictEqual(server.log.toolCalls.map((entry) => entry.args["text"]), ["one"])
        const next = yield* call("echo", { text: "three" })
        assert.deepStrictEqual(next.data, { summary: "echo: three" })
        assert.strictEqual(server.log.initializes, 2, "the new session is reused")
      })
    )
  )

  it.effect("a server disabled after the turn started refuses the call without contacting the server", () =>
    withServer(undefined, ({ call, server }) =>
      Effect.gen(function* () {
        const registry = yield* ToolRegistry
        const { context } = yield* makeToolContext()
        const echo = (yield* registry.toolsForTurn(guildTurn)).find((entry) => entry.name === "echo")
        if (echo === undefined) return assert.fail("echo is declared before the server is disabled")
        yield* Effect.flatMap(GuildMcpAdmin, (admin) => admin.disable("guild-1", "tools"))
        const result = yield* echo.execute({ text: "late" }).pipe(provideToolContext(context))
        assert.isFalse(result.success)
        assert.include(result.error ?? "", "no longer enabled")
        assert.strictEqual(server.log.toolCalls.length, 0)
        assert.isFalse((yield* call("echo", { text: "late" })).success)
      })
    )
  )
})
