import { assert, describe, it } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Option, Ref } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import type { GuildToolSet } from "../../src/tools/GuildToolSource"
import type { Tool } from "../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../src/tools/ToolContext"
import { EXECUTION_HISTORY_KEEP, EXECUTION_HISTORY_MAX, type ToolRegistryShape } from "../../src/tools/ToolRegistry"
import { makeTurnState, spendOncePerTurnTool } from "../../src/tools/TurnState"
import { constantTool, dyingTool, failingTool, makeHangingTool, makeRecordingTool, rawTool } from "../support/tools/testTools"
import { makeToolCallHarness, type ToolCallHarness, type ToolCallHarnessOptions } from "../support/tools/toolCallHarness"
import { testToolContext } from "../support/tools/testToolContext"

/** A ToolContext for calling `registry.execute` directly. */
const toolContext = (overrides: Partial<ToolContextShape> = {}) =>
  Effect.map(testToolContext({ messageId: undefined, ...overrides }), ({ context }) => context)

const execute = (h: ToolCallHarness, name: string, args: Record<string, unknown> = {}, overrides: Partial<ToolContextShape> = {}) =>
  Effect.flatMap(toolContext(overrides), (context) =>
    h.logs.capture(h.registry.execute(name, args).pipe(Effect.provideService(ToolContext, context))))

const availability = { provider: "openai-compatible", model: "test-model", guildId: "guild-1", channelId: "channel-1" }
const turnTools = (registry: ToolRegistryShape, overrides: { provider?: string; guildId?: string | undefined } = {}) =>
  Effect.gen(function*() {
    const state = yield* makeTurnState()
    const flags = yield* Ref.get(state.flags)
    return (yield* registry.toolsForTurn({ ...availability, ...overrides, flags })).map((tool) => tool.name)
  })

const harness = (options: ToolCallHarnessOptions = {}) => makeToolCallHarness(options)

describe("ToolRegistry.register (spec §6.1)", () => {
  it.effect("[74] registering the same name twice fails with a duplicate error", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: [constantTool("echo", toolSuccess())] })
      const error = yield* Effect.flip(h.registry.register(constantTool("echo", toolSuccess())))
      assert.strictEqual(error._tag, "ToolRegistrationError")
      assert.strictEqual(error.reason, "duplicate")
      assert.include(error.message, "echo")
    }))

  it.effect("[74] a tool without isAvailableFor is rejected as invalid", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const { isAvailableFor: _dropped, ...withoutGate } = constantTool("gateless", toolSuccess())
      const error = yield* Effect.flip(h.registry.register(withoutGate as Tool))
      assert.strictEqual(error.reason, "invalid")
      assert.include(error.detail, "isAvailableFor")
    }))

  it.effect("invalid definitions are refused with a clear reason", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      const cases: ReadonlyArray<readonly [Tool, string]> = [
        [rawTool({ name: "" }), "name"],
        [rawTool({ name: "has space" }), "name"],
        [rawTool({ name: "x".repeat(65) }), "name"],
        [rawTool({ name: "ok", description: "  " }), "description"],
        [rawTool({ name: "ok", parameters: { type: "array", properties: {} } as unknown as Tool["parameters"] }), "object schema"],
        [rawTool({ name: "ok", parameters: { type: "object" } as unknown as Tool["parameters"] }), "properties"],
        [rawTool({ name: "ok", parameters: { type: "object", properties: {}, required: "a" } as unknown as Tool["parameters"] }), "required"],
        [rawTool({ name: "ok", execute: undefined as unknown as Tool["execute"] }), "execute"],
        [rawTool({ name: "ok", category: "weird" as Tool["category"] }), "category"]
      ]
      for (const [tool, fragment] of cases) {
        const error = yield* Effect.flip(h.registry.register(tool))
        assert.strictEqual(error.reason, "invalid", fragment)
        assert.include(error.detail, fragment)
      }
      assert.strictEqual((yield* h.registry.all).length, 0)
    }))

  it.effect("a parameters schema without `required` is accepted (MCP input schemas often omit it)", () =>
    Effect.gen(function*() {
      const h = yield* harness()
      yield* h.registry.register(rawTool({ name: "mcp_like", parameters: { type: "object", properties: { q: { type: "string" } } } }))
      assert.strictEqual((yield* h.registry.all).length, 1)
    }))

  it.effect("aliases: unknown targets and name clashes are refused; get() resolves aliases; unregister drops them", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: [constantTool("create_long_term_memory", toolSuccess())] })
      assert.strictEqual((yield* Effect.flip(h.registry.registerAlias("x", "nothing"))).reason, "unknown_alias_target")
      assert.strictEqual((yield* Effect.flip(h.registry.registerAlias("create_long_term_memory", "create_long_term_memory"))).reason, "duplicate")
      yield* h.registry.registerAlias("remember_this_fact", "create_long_term_memory")
      assert.strictEqual((yield* Effect.flip(h.registry.registerAlias("remember_this_fact", "create_long_term_memory"))).reason, "duplicate")
      assert.strictEqual((yield* Effect.flip(h.registry.register(constantTool("remember_this_fact", toolSuccess())))).reason, "duplicate")
      assert.strictEqual(Option.map(yield* h.registry.get("remember_this_fact"), (tool) => tool.name).pipe(Option.getOrNull), "create_long_term_memory")
      assert.isTrue(yield* h.registry.unregister("create_long_term_memory"))
      assert.isFalse(yield* h.registry.unregister("create_long_term_memory"))
      assert.isTrue(Option.isNone(yield* h.registry.get("remember_this_fact")))
    }))
})

describe("ToolRegistry.execute gates (spec §6.1, §6.2)", () => {
  it.effect("[75] a tool not available for the provider: error naming the provider, logged at error", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("fetch_url", undefined, { isAvailableFor: (provider) => provider !== "novelai" })
      const h = yield* harness({ tools: [tool.tool] })
      const result = yield* execute(h, "fetch_url", { url: "https://example.com" }, { provider: "novelai" })
      assert.deepStrictEqual(result, { success: false, error: "Tool 'fetch_url' is not available for provider 'novelai'" })
      assert.strictEqual((yield* Ref.get(tool.calls)).length, 0)
      assert.strictEqual((yield* h.logs.matching("not available for provider"))[0]?.level, "ERROR")
    }))

  it.effect("[76] a tool unavailable in this context: 'current turn' + 'Do not call it again', warn level, never 'provider'", () =>
    Effect.gen(function*() {
      const tool = yield* makeRecordingTool("update_short_term_memory", undefined, { oncePerTurn: true })
      const h = yield* harness({ tools: [tool.tool] })
      const context = yield* toolContext()
      yield* spendOncePerTurnTool(context.turnState, "update_short_term_memory")
      const result = yield* h.logs.capture(h.registry.execute("update_short_term_memory", {}).pipe(Effect.provideService(ToolContext, context)))
      assert.isFalse(result.success)
      assert.include(result.error, "not available for the current turn")
      assert.include(result.error, "Do not call it again")
      assert.notInclude(result.error!.toLowerCase(), "provider")
      assert.strictEqual((yield* Ref.get(tool.calls)).length, 0)
      const [log] = yield* h.logs.matching("not available for the current turn")
      assert.strictEqual(log?.level, "WARN")
    }))

  it.effect("an availability check that throws hides the tool for the turn instead of crashing", () =>
    Effect.gen(function*() {
      const h = yield* harness({
        tools: [rawTool({ name: "flaky", isAvailableForContext: () => { throw new Error("config not loaded") } })]
      })
      const result = yield* execute(h, "flaky")
      assert.include(result.error, "not available for the current turn")
      assert.deepStrictEqual(yield* turnTools(h.registry), [])
    }))

  it.effect("[77] an unknown name suggests the closest available tool and lists only available tools, logged at error", () =>
    Effect.gen(function*() {
      const h = yield* harness({
        tools: [
          constantTool("web_search", toolSuccess()),
          constantTool("fetch_url", toolSuccess()),
          constantTool("web_searcher_nai_only", toolSuccess(), { isAvailableFor: (provider) => provider === "novelai" })
        ]
      })
      const result = yield* execute(h, "web_serch")
      assert.strictEqual(result.error, "Tool 'web_serch' not found. Did you mean 'web_search'? Available tools: web_search, fetch_url")
      assert.strictEqual((yield* h.logs.matching("not found"))[0]?.level, "ERROR")
      const far = yield* execute(h, "ping")
      assert.strictEqual(far.error, "Tool 'ping' not found. Available tools: web_search, fetch_url")
    }))

  it.effect("[78] an alias dispatches its target", () =>
    Effect.gen(function*() {
      const memory = yield* makeRecordingTool("create_long_term_memory", () => Effect.succeed(toolSuccess({ ok: true })))
      const h = yield* harness({ tools: [memory.tool], aliases: [["remember_this_fact", "create_long_term_memory"]] })
      assert.deepStrictEqual(yield* execute(h, "remember_this_fact", { fact: "x" }), { success: true, data: { ok: true } })
      assert.deepStrictEqual((yield* Ref.get(memory.calls)).map((c) => c.args), [{ fact: "x" }])
    }))

  it.effect("ToolErrors and defects become failed results; interruption propagates", () =>
    Effect.gen(function*() {
      const hanging = yield* makeHangingTool("hang")
      const h = yield* harness({ tools: [failingTool("f", "raw", "friendly"), dyingTool("d", "kaboom"), hanging.tool] })
      assert.deepStrictEqual(yield* execute(h, "f"), { success: false, error: "raw", message: "friendly" })
      // A defect's words are for operators (detail): the model reads the class.
      assert.deepStrictEqual(yield* execute(h, "d"), { success: false, error: "Tool 'd' failed: an internal error.", detail: "kaboom" })
      const fiber = yield* Effect.forkChild(execute(h, "hang"))
      yield* Deferred.await(hanging.started)
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause), "the registry never swallows an interruption")
      yield* hanging.whenFinalized
      assert.isTrue(yield* Ref.get(hanging.finalized))
      const [latest] = yield* h.registry.executionHistory()
      assert.deepStrictEqual([latest?.name, latest?.success, latest?.error], ["hang", false, "interrupted"])
    }))

  it.effect("the execution history keeps at most 1000 records, trimmed to the latest 900, most recent first", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: [rawTool({ name: "t", execute: (args) => Effect.succeed(toolSuccess(args)) })] })
      const context = yield* toolContext()
      for (let i = 0; i < EXECUTION_HISTORY_MAX; i++) {
        yield* h.registry.execute("t", { i }).pipe(Effect.provideService(ToolContext, context))
      }
      assert.strictEqual((yield* h.registry.executionHistory(2000)).length, EXECUTION_HISTORY_MAX)
      yield* h.registry.execute("t", { i: EXECUTION_HISTORY_MAX }).pipe(Effect.provideService(ToolContext, context))
      const records = yield* h.registry.executionHistory(2000)
      assert.strictEqual(records.length, EXECUTION_HISTORY_KEEP)
      assert.deepStrictEqual(records[0]?.args, { i: EXECUTION_HISTORY_MAX })
      assert.deepStrictEqual(records.at(-1)?.args, { i: EXECUTION_HISTORY_MAX - EXECUTION_HISTORY_KEEP + 1 })
      assert.strictEqual((yield* h.registry.executionHistory()).length, 100)
    }))
})

/** A global MCP tool (registered) and guild MCP tools (from the GuildToolSource). */
const globalMcp = (name: string) => constantTool(name, toolSuccess({ from: "global" }), { category: "mcp", source: { kind: "mcp", scope: "global", server: "global-search" } })
const guildMcp = (name: string) => constantTool(name, toolSuccess({ from: "guild" }), { category: "mcp", source: { kind: "mcp", scope: "guild", server: "guild-fetcher" } })

describe("ToolRegistry.toolsForTurn (spec §6.3)", () => {
  const builtins = [
    constantTool("web_search", toolSuccess(), { requiresFollowUp: true }),
    constantTool("fetch_url", toolSuccess({ from: "builtin" }), { requiresFollowUp: true, isAvailableFor: (p) => p !== "novelai" }),
    constantTool("manage_message", toolSuccess({ from: "builtin" }))
  ]

  it.effect("[83] without guild replacements web_search and fetch_url stay and no MCP names appear", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: builtins })
      assert.deepStrictEqual(yield* turnTools(h.registry), ["web_search", "fetch_url", "manage_message"])
      assert.deepStrictEqual(yield* turnTools(h.registry, { provider: "novelai" }), ["web_search", "manage_message"])
    }))

  it.effect("[82] a guild url_fetcher hides built-in fetch_url; a guild name colliding with a built-in is dropped", () =>
    Effect.gen(function*() {
      const guild: GuildToolSet = { tools: [guildMcp("fetch"), guildMcp("manage_message")], hiddenBuiltins: ["fetch_url"] }
      const h = yield* harness({ tools: builtins, guildTools: (guildId) => guildId === "guild-1" ? guild : { tools: [], hiddenBuiltins: [] } })
      assert.deepStrictEqual(yield* h.logs.capture(turnTools(h.registry)), ["web_search", "manage_message", "fetch"])
      assert.strictEqual((yield* h.logs.matching("Guild tool 'manage_message' dropped"))[0]?.level, "WARN")
      // Another guild keeps the built-in.
      assert.deepStrictEqual(yield* turnTools(h.registry, { guildId: "guild-2" }), ["web_search", "fetch_url", "manage_message"])
      // Routing follows the same rules: the built-in manage_message, the guild's fetch, no fetch_url.
      assert.deepStrictEqual(yield* execute(h, "manage_message"), { success: true, data: { from: "builtin" } })
      assert.deepStrictEqual(yield* execute(h, "fetch"), { success: true, data: { from: "guild" } })
      assert.include((yield* execute(h, "fetch_url")).error, "not found")
    }))

  it.effect("[82] a guild tool that replaces a hidden built-in under the same name wins", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: builtins, guildTools: () => ({ tools: [guildMcp("fetch_url")], hiddenBuiltins: ["fetch_url"] }) })
      const tools = yield* h.registry.toolsForTurn({ ...availability, flags: yield* Ref.get((yield* makeTurnState()).flags) })
      assert.deepStrictEqual(tools.map((tool) => [tool.name, tool.source.kind]), [["web_search", "builtin"], ["manage_message", "builtin"], ["fetch_url", "mcp"]])
      assert.deepStrictEqual(yield* execute(h, "fetch_url"), { success: true, data: { from: "guild" } })
      assert.isTrue(yield* h.registry.requiresFollowUp("fetch_url", "openai-compatible", "guild-1"))
    }))

  it.effect("[84] global MCP engine names web-search, iask-search and monica-search are never declared", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: [...builtins, globalMcp("web-search"), globalMcp("iask-search"), globalMcp("monica-search"), globalMcp("weather")] })
      assert.deepStrictEqual(yield* turnTools(h.registry), ["web_search", "fetch_url", "manage_message", "weather"])
    }))

  it.effect("routing precedence: a global MCP tool, then the guild's tools, then built-ins", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: [globalMcp("weather")], guildTools: () => ({ tools: [guildMcp("weather"), guildMcp("dice")], hiddenBuiltins: [] }) })
      assert.deepStrictEqual(yield* execute(h, "weather"), { success: true, data: { from: "global" } })
      assert.deepStrictEqual(yield* execute(h, "dice"), { success: true, data: { from: "guild" } })
      // No guild (a DM): guild tools do not exist.
      assert.include((yield* execute(h, "dice", {}, { guildId: undefined })).error, "not found")
    }))

  it.effect("a guild source that crashes costs the guild its tools, never the turn", () =>
    Effect.gen(function*() {
      const h = yield* harness({ tools: builtins, guildTools: () => { throw new Error("pool exploded") } })
      assert.deepStrictEqual(yield* h.logs.capture(turnTools(h.registry)), ["web_search", "fetch_url", "manage_message"])
      assert.strictEqual((yield* h.logs.matching("pool exploded"))[0]?.level, "WARN")
      assert.deepStrictEqual(yield* execute(h, "manage_message"), { success: true, data: { from: "builtin" } })
    }))

  it.effect("one turn asks the guild source once: declaring, dispatching and the follow-up check share its answer (and its warnings)", () =>
    Effect.gen(function*() {
      let asked = 0
      const h = yield* harness({
        tools: builtins,
        guildTools: () => {
          asked += 1
          return { tools: [guildMcp("dice"), guildMcp("manage_message")], hiddenBuiltins: [] }
        }
      })
      const context = yield* toolContext()
      const turn = { ...availability, flags: yield* Ref.get(context.turnState.flags), turnState: context.turnState }
      const call = (name: string) => h.logs.capture(h.registry.execute(name, {}).pipe(Effect.provideService(ToolContext, context)))
      for (let pass = 0; pass < 3; pass++) {
        assert.deepStrictEqual((yield* h.logs.capture(h.registry.toolsForTurn(turn))).map((tool) => tool.name), ["web_search", "fetch_url", "manage_message", "dice"])
        assert.deepStrictEqual(yield* call("dice"), { success: true, data: { from: "guild" } })
      }
      assert.isTrue(yield* h.registry.requiresFollowUp("dice", "openai-compatible", "guild-1", context.turnState))
      assert.strictEqual(asked, 1)
      assert.strictEqual((yield* h.logs.matching("Guild tool 'manage_message' dropped")).length, 1, "the collision is reported once per turn")
      // The next turn (a fresh turn state) asks again; a caller without one asks every time.
      const next = yield* toolContext()
      yield* h.registry.execute("dice", {}).pipe(Effect.provideService(ToolContext, next))
      assert.strictEqual(asked, 2)
      yield* h.registry.toolsForTurn({ ...availability, flags: turn.flags })
      yield* h.registry.requiresFollowUp("dice", "openai-compatible", "guild-1")
      assert.strictEqual(asked, 4)
    }))

  it.effect("requiresFollowUp: built-in flag, MCP always, alias resolved, unknown false", () =>
    Effect.gen(function*() {
      const h = yield* harness({
        tools: [...builtins, globalMcp("weather")],
        aliases: [["search_web", "web_search"]],
        guildTools: () => ({ tools: [guildMcp("dice")], hiddenBuiltins: [] })
      })
      const follow = (name: string, guildId: string | null = "guild-1") =>
        h.registry.requiresFollowUp(name, "openai-compatible", guildId ?? undefined)
      assert.isTrue(yield* follow("web_search"))
      assert.isTrue(yield* follow("search_web"))
      assert.isFalse(yield* follow("manage_message"))
      assert.isTrue(yield* follow("weather"))
      assert.isTrue(yield* follow("dice"))
      assert.isFalse(yield* follow("dice", null))
      assert.isFalse(yield* follow("nonexistent"))
    }))
})

describe("ToolRegistry.toolsForTurn: dynamic assembly (spec §6.4)", () => {
  it.effect("[81] no hook ⇒ the same object; variant ⇒ used; null ⇒ hidden; a throwing or failing hook ⇒ omitted, others kept", () =>
    Effect.gen(function*() {
      const plain = constantTool("plain", toolSuccess())
      const narrowed = constantTool("narrowed", toolSuccess(), {
        assembleForContext: (context) =>
          Effect.succeed({ ...narrowed, description: `narrowed for ${context.provider}; also here: ${[...context.availableToolNames].join(",")}` })
      })
      const hidden = constantTool("hidden", toolSuccess(), { assembleForContext: () => Effect.succeed(null) })
      const throwing = constantTool("throwing", toolSuccess(), { assembleForContext: () => { throw new Error("bad config") } })
      const failing = constantTool("failing", toolSuccess(), { assembleForContext: () => Effect.fail("no backend") })
      const dying = constantTool("dying", toolSuccess(), { assembleForContext: () => Effect.die(new Error("bug")) })
      const renamed = constantTool("renamed", toolSuccess(), { assembleForContext: () => Effect.succeed(constantTool("other", toolSuccess())) })
      const h = yield* harness({ tools: [plain, narrowed, hidden, throwing, failing, dying, renamed] })
      const state = yield* makeTurnState()
      const tools = yield* h.logs.capture(h.registry.toolsForTurn({ ...availability, flags: yield* Ref.get(state.flags) }))
      assert.deepStrictEqual(tools.map((tool) => tool.name), ["plain", "narrowed"])
      assert.strictEqual(tools[0], plain)
      assert.strictEqual(tools[1]!.description, "narrowed for openai-compatible; also here: plain,narrowed,hidden,throwing,failing,dying,renamed")
      const warnings = yield* h.logs.matching("omitted for this turn")
      assert.deepStrictEqual(warnings.map((line) => line.level), ["WARN", "WARN", "WARN", "WARN"])
      assert.include(warnings[0]!.message, "bad config")
      assert.include(warnings[1]!.message, "no backend")
    }))
})
