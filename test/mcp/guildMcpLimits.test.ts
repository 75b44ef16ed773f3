import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { McpConfig } from "../../src/config/McpConfig"
import { GlobalMcpServersLive } from "../../src/mcp/GlobalMcpServers"
import { declarationChars, exposeGuildTools } from "../../src/mcp/guildExposure"
import type { GuildMcpServerConfig } from "../../src/mcp/GuildMcpRegistry"
import { measureJson } from "../../src/mcp/jsonBounds"
import { cutResultText, toToolResult } from "../../src/mcp/mcpResult"
import type { McpToolInfo } from "../../src/mcp/McpSession"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { startHostileServer } from "../support/mcpServers/hostileServer"
import { startStreamableServer } from "../support/mcpServers/httpServers"
import {
  guildServer,
  guildTurn,
  makeToolContext,
  provideToolContext,
  registryWithGuildMcp,
  serve
} from "../support/mcpServers/mcpTestKit"
import { text, type TestTool } from "../support/mcpServers/testTools"
import { makeLogCapture } from "../support/tools/logCapture"

const info = (name: string, schemaChars = 0): McpToolInfo => ({
  mcpName: name,
  declaredName: name,
  description: `Tool ${name}`,
  inputSchema: { type: "object", properties: schemaChars === 0 ? {} : { blob: { type: "string", description: "s".repeat(schemaChars) } } }
})

/** `data.summary` of a successful MCP result. */
const summaryOf = (result: { readonly data?: unknown }): string =>
  typeof result.data === "object" && result.data !== null && "summary" in result.data ? String(result.data.summary) : ""

const registration = (name: string): GuildMcpServerConfig => guildServer({ name, url: `https://${name}.example/mcp` })

const execute = (name: string, args: Record<string, unknown> = {}) =>
  Effect.gen(function* () {
    const { context } = yield* makeToolContext()
    return yield* Effect.flatMap(ToolRegistry, (registry) => registry.execute(name, args)).pipe(provideToolContext(context))
  })

describe("limits on untrusted MCP servers (design decision 19)", () => {
  it("measureJson: size and depth without recursion, equal to JSON.stringify where it can run", () => {
    const value = { type: "object", properties: { a: { type: "string", enum: ["x", "y\"z"] }, n: { type: "number", minimum: -1.5 } }, flag: true, none: null }
    assert.deepStrictEqual(measureJson(value, { maxChars: 10_000, maxDepth: 10 }), { ok: true, chars: JSON.stringify(value).length })
    assert.deepStrictEqual(measureJson([], { maxChars: 10, maxDepth: 1 }), { ok: true, chars: 2 })
    assert.deepStrictEqual(measureJson(value, { maxChars: 20, maxDepth: 10 }), { ok: false, reason: "too_large" })
    let deep: unknown = "leaf"
    for (let level = 0; level < 50_000; level++) deep = { x: deep }
    assert.throws(() => JSON.stringify(deep), /call stack/)
    assert.deepStrictEqual(measureJson(deep, { maxChars: Number.POSITIVE_INFINITY, maxDepth: 32 }), { ok: false, reason: "too_deep" })
    assert.deepStrictEqual(measureJson({ a: { b: {} } }, { maxChars: 100, maxDepth: 3 }), { ok: true, chars: 14 })
    assert.deepStrictEqual(measureJson({ a: { b: {} } }, { maxChars: 100, maxDepth: 2 }), { ok: false, reason: "too_deep" })
  })

  it("cutResultText: at most the limit, marker included, never half a surrogate pair", () => {
    assert.strictEqual(cutResultText("short", 600), "short")
    const cut = cutResultText("a".repeat(2_000), 600)
    assert.strictEqual(cut.length <= 600, true)
    assert.match(cut, /\n\[… cut: the MCP result had 2000 characters; only the first \d+ are kept\]$/)
    const emoji = cutResultText("😀".repeat(1_000), 600)
    assert.isAtMost(emoji.length, 600)
    const kept = emoji.slice(0, emoji.indexOf("\n["))
    assert.strictEqual(kept.length % 2, 0, "whole emoji only")
    const structured = toToolResult("t", { content: [], structuredContent: { rows: "r".repeat(5_000) } }, 1_000)
    assert.isAtMost(summaryOf(structured).length, 1_000)
    let deep: unknown = 1
    for (let level = 0; level < 20_000; level++) deep = [deep]
    assert.include(summaryOf(toToolResult("t", { content: [], structuredContent: deep })), "nested deeper than 64 levels")
    const failure = toToolResult("t", { isError: true, content: [{ type: "text", text: "e".repeat(5_000) }] }, 1_000)
    assert.isAtMost(failure.error?.length ?? 0, 1_000)
  })

  it("the guild's declarations of one turn stay within the budget: later tools are left out with a warning", () => {
    const big = [info("one", 40_000), info("two", 40_000), info("three", 40_000), info("four", 40_000)]
    const exposure = exposeGuildTools(
      [registration("first"), registration("second")],
      [
        { config: registration("first"), tools: big.slice(0, 2) },
        { config: registration("second"), tools: [...big.slice(2), info("tiny")] }
      ],
      { declarationsMaxChars: 128 * 1024 }
    )
    assert.deepStrictEqual(exposure.tools.map((tool) => tool.info.declaredName), ["one", "two", "three", "tiny"])
    const total = exposure.tools.reduce((sum, tool) => sum + declarationChars(tool.info), 0)
    assert.isAtMost(total, 128 * 1024)
    assert.isTrue(exposure.warnings.some((warning) => warning.includes("1 guild MCP tool(s) left out") && warning.includes("four")))
  })

  it.effect("a guild server's 7 MiB tool result reaches the model cut to MCP_RESULT_MAX_CHARS, with a marker", () =>
    Effect.gen(function* () {
      const hostile = yield* serve(() => startHostileServer("schemas"))
      const result = yield* execute("flood").pipe(
        Effect.provide(registryWithGuildMcp({ registrations: [guildServer({ url: hostile.url })] }).layer)
      )
      const summary = summaryOf(result)
      assert.isTrue(result.success)
      assert.strictEqual(summary.length <= 50_000, true)
      assert.isAbove(summary.length, 49_000)
      assert.match(summary, /\[… cut: the MCP result had 7340032 characters; only the first \d+ are kept\]$/)
    })
  )

  it.effect("GUILD_MCP_MAX_TOOLS, the declarations budget and MCP_RESULT_MAX_CHARS are settings", () =>
    Effect.gen(function* () {
      const many: ReadonlyArray<TestTool> = Array.from({ length: 10 }, (_, index) => ({ name: `t${index}`, run: async () => text("z".repeat(3_000)) }))
      const server = yield* serve(() => startStreamableServer({ tools: many }))
      const logs = yield* makeLogCapture
      const stack = registryWithGuildMcp({
        registrations: [guildServer({ url: server.url })],
        settings: { guildMaxTools: 4, resultMaxChars: 1_000 }
      })
      const { declared, result } = yield* logs.capture(
        Effect.gen(function* () {
          const declared = yield* Effect.flatMap(ToolRegistry, (registry) => registry.toolsForTurn(guildTurn))
          return { declared, result: yield* execute("t0") }
        }).pipe(Effect.provide(stack.layer))
      )
      assert.deepStrictEqual(declared.map((tool) => tool.name), ["t0", "t1", "t2", "t3"])
      assert.isAtMost(summaryOf(result).length, 1_000)
      const warned = yield* logs.matching("offers more than 4 tools; only the first 4 are kept")
      assert.strictEqual(warned[0]?.level, "WARN")
    })
  )

  it.effect("a guild schema nested 32 levels is kept and one nested 33 levels is skipped (the default depth bound)", () =>
    Effect.gen(function* () {
      // Each wrapper `{ type, properties: { x } }` is two levels; the leaves add one (string) or two (array).
      const nest = (wrappers: number, leaf: Record<string, unknown>): Record<string, unknown> =>
        wrappers === 0 ? leaf : { type: "object", properties: { x: nest(wrappers - 1, leaf) } }
      const atBound = nest(15, { type: "array", items: { type: "string" } })
      const overBound = nest(16, { type: "string" })
      assert.deepStrictEqual(
        [measureJson(atBound, { maxChars: 1e9, maxDepth: 32 }).ok, measureJson(overBound, { maxChars: 1e9, maxDepth: 32 }).ok],
        [true, false],
        "the fixtures sit on either side of 32 levels"
      )
      const server = yield* serve(() =>
        startStreamableServer({
          tools: [
            { name: "at_bound", inputSchema: atBound, run: async () => text("ok") },
            { name: "over_bound", inputSchema: overBound, run: async () => text("ok") }
          ]
        })
      )
      const declared = yield* Effect.flatMap(ToolRegistry, (registry) => registry.toolsForTurn(guildTurn)).pipe(
        Effect.provide(registryWithGuildMcp({ registrations: [guildServer({ url: server.url })] }).layer)
      )
      assert.deepStrictEqual(declared.map((tool) => tool.name), ["at_bound"])
    })
  )

  it.effect("a turn declares guild tools up to 128 KiB in total: the tool that would cross it is left out with a warning", () =>
    Effect.gen(function* () {
      // Ten tools of about 14 000 characters each (each under the 16 KiB schema bound): nine fit in 131 072.
      const fat: ReadonlyArray<TestTool> = Array.from({ length: 10 }, (_, index) => ({
        name: `fat${index}`,
        inputSchema: { type: "object", properties: { blob: { type: "string", description: "d".repeat(14_000) } } },
        run: async () => text("ok")
      }))
      const server = yield* serve(() => startStreamableServer({ tools: fat }))
      const logs = yield* makeLogCapture
      const declared = yield* logs.capture(
        Effect.flatMap(ToolRegistry, (registry) => registry.toolsForTurn(guildTurn)).pipe(
          Effect.provide(registryWithGuildMcp({ registrations: [guildServer({ url: server.url })] }).layer)
        )
      )
      assert.deepStrictEqual(declared.map((tool) => tool.name), fat.slice(0, 9).map((tool) => tool.name))
      const warned = yield* logs.matching("guild's declarations would exceed 131072 characters (fat9)")
      assert.strictEqual(warned[0]?.level, "WARN")
    })
  )

  it.effect("a global server's results are cut too (MCP_RESULT_MAX_CHARS)", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer({ tools: [{ name: "long", run: async () => text("g".repeat(80_000)) }] }))
      const registry = ToolRegistry.layer.pipe(Layer.provide(GuildToolSource.none))
      const result = yield* Effect.gen(function* () {
        yield* Layer.build(GlobalMcpServersLive.pipe(
          Layer.provide(McpConfig.make({ globalServers: [{ name: "global", url: server.url, transport: "streamable-http", args: [] }] }))
        ))
        return yield* execute("long")
      }).pipe(Effect.provide(registry))
      const summary = summaryOf(result)
      assert.isAtMost(summary.length, 50_000)
      assert.include(summary, "the MCP result had 80000 characters")
    })
  )
})
