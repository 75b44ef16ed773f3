import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import type { ToolDeclaration } from "../../../src/domain/ToolDeclaration"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import * as Anthropic from "../../../src/provider/anthropic/Anthropic"
import { countBreakpoints, withCacheBreakpoints } from "../../../src/provider/anthropic/promptCache"
import { textBlock, toolUseBlock } from "../../support/fakeProviders/anthropic"
import { cachingAnthropic } from "../../support/fakeProviders/anthropicCache"
import { fakeLlmServer } from "../../support/fakeProviders/FakeLlmServer"
import { buildModel, collect, HttpLive, request, userMessage } from "../harness"

const ephemeral = { type: "ephemeral" }

const tool = (name: string): ToolDeclaration => ({
  name,
  description: `The ${name} tool. `.repeat(40),
  parameters: { type: "object", properties: { text: { type: "string" } } }
})

const entry = (index: number): ToolHistoryEntry => ({
  functionCall: { name: "echo_tool", args: { text: `step ${index}` }, id: `toolu_${index}` },
  functionResponse: { name: "echo_tool", response: { result: { echoed: `step ${index}` } } }
})

/** The parts of a Messages body these tests look at. */
interface Body {
  readonly tools?: unknown
  readonly system?: unknown
  readonly messages: ReadonlyArray<unknown>
}
const place = (body: Readonly<Record<string, unknown>>): Body => withCacheBreakpoints(body) as unknown as Body

const longSystem = "You are loopcord, a careful assistant. Follow the house rules. ".repeat(120)

describe("Anthropic prompt caching: breakpoint placement (pure)", () => {
  it("marks the last tool, the system prompt and the newest user turn; leaves a trailing prefill after the breakpoint", () => {
    const body = place({
      model: "claude",
      system: "rules",
      tools: [{ name: "a" }, { name: "b" }],
      messages: [
        { role: "user", content: [{ type: "text", text: "hi" }] },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "a", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] },
        { role: "assistant", content: [{ type: "text", text: "So far" }] }
      ]
    })
    assert.deepStrictEqual(body.tools, [{ name: "a" }, { name: "b", cache_control: ephemeral }])
    assert.deepStrictEqual(body.system, [{ type: "text", text: "rules", cache_control: ephemeral }])
    assert.deepStrictEqual(body.messages[2], {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "t1", content: "r", cache_control: ephemeral }]
    })
    assert.deepStrictEqual(body.messages[3], { role: "assistant", content: [{ type: "text", text: "So far" }] }, "the prefill changes between attempts")
    assert.strictEqual(countBreakpoints(body as unknown as Record<string, unknown>), 3)
  })

  it("absent parts get no breakpoint; a string user content becomes one marked text block", () => {
    const body = place({ model: "claude", messages: [{ role: "user", content: "hello" }] })
    assert.isUndefined(body.tools)
    assert.isUndefined(body.system)
    assert.deepStrictEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "hello", cache_control: ephemeral }] }])
  })

  it("never more than Anthropic's 4, counting breakpoints an extra body already brought", () => {
    const mark = { cache_control: ephemeral }
    const body = place({
      model: "claude",
      system: [{ type: "text", text: "a", ...mark }, { type: "text", text: "b", ...mark }, { type: "text", text: "c", ...mark }],
      tools: [{ name: "x" }],
      messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }]
    })
    assert.strictEqual(countBreakpoints(body as unknown as Record<string, unknown>), 4)
    assert.deepStrictEqual(body.tools, [{ name: "x", cache_control: ephemeral }], "the tool list is first in the cache order")
    assert.deepStrictEqual(body.messages, [{ role: "user", content: [{ type: "text", text: "hi" }] }])
  })
})

describe("Anthropic prompt caching over loopback (the fake counts cache reads and writes)", () => {
  const chain = Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    const fake = cachingAnthropic({
      reply: (_request, index) =>
        index < 2
          ? { content: toolUseBlock(0, { id: `toolu_${index + 1}`, name: "echo_tool" }, ["{\"text\":\"x\"}"]), stopReason: "tool_use", outputTokens: 12 }
          : { content: textBlock(0, ["done"]), stopReason: "end_turn", outputTokens: 3 }
    })
    server.setHandler(fake.handler)
    return { server, fake }
  })

  it.live("pass 1 writes tools + system + message, later passes read that prefix and write only what is new; usage carries both", () =>
    Effect.gen(function*() {
      const { fake, server } = yield* chain
      const model = yield* buildModel(Anthropic.layer({ baseUrl: server.url }))
      const base = { system: longSystem, tools: [tool("echo_tool"), tool("read_file")], messages: [userMessage("start")] }
      const usages = []
      for (let pass = 0; pass < 3; pass++) {
        const result = yield* collect(model, request({ ...base, functionHistory: Array.from({ length: pass }, (_, index) => entry(index + 1)) }))
        assert.isUndefined(result.error)
        const usage = result.events.find((event) => event._tag === "Usage")
        usages.push(usage?._tag === "Usage" ? usage.usage : undefined)
      }
      const [first, second, third] = fake.ledger
      assert.strictEqual(first?.cacheReadInputTokens, 0)
      assert.strictEqual(first?.cacheCreationInputTokens, first?.totalInputTokens, "everything up to the user's message is written")
      assert.isAbove(second!.cacheReadInputTokens, 1500, "the tools and the system prompt are read back")
      assert.strictEqual(second?.cacheReadInputTokens, first?.totalInputTokens, "the whole first request is the cached prefix")
      assert.strictEqual(second!.cacheCreationInputTokens, second!.totalInputTokens - first!.totalInputTokens, "only the new blocks are written")
      assert.strictEqual(third?.cacheReadInputTokens, second?.totalInputTokens)
      // The provider reports them: input is every token, cached ⊂ input.
      assert.deepStrictEqual(usages[0], {
        inputTokens: first!.totalInputTokens,
        outputTokens: 12,
        totalTokens: first!.totalInputTokens + 12,
        cacheWriteTokens: first!.cacheCreationInputTokens
      })
      assert.deepStrictEqual(usages[1], {
        inputTokens: second!.totalInputTokens,
        outputTokens: 12,
        totalTokens: second!.totalInputTokens + 12,
        cachedInputTokens: second!.cacheReadInputTokens,
        cacheWriteTokens: second!.cacheCreationInputTokens
      })
      const body = server.requests[2]!.json as { tools: ReadonlyArray<Record<string, unknown>>; system: unknown; messages: ReadonlyArray<{ content: ReadonlyArray<Record<string, unknown>> }> }
      assert.deepStrictEqual(body.tools.map((declared) => declared.cache_control), [undefined, ephemeral])
      assert.deepStrictEqual(body.system, [{ type: "text", text: longSystem, cache_control: ephemeral }])
      const marks = body.messages.flatMap((turn) => turn.content.map((block) => block.cache_control !== undefined))
      assert.deepStrictEqual(marks, [false, false, false, false, true], "one breakpoint, on the newest tool result")
      assert.isTrue(fake.ledger.every((account) => account.breakpoints === 3))
    }))

  it.live("ANTHROPIC_PROMPT_CACHE=off: no cache_control anywhere, nothing read or written, usage without cache fields", () =>
    Effect.gen(function*() {
      const { fake, server } = yield* chain
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_BASE_URL", server.url], ["ANTHROPIC_PROMPT_CACHE", "off"]]) })
      const model = yield* buildModel(Anthropic.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config))))
      const base = { system: longSystem, tools: [tool("echo_tool")], messages: [userMessage("start")] }
      yield* collect(model, request(base))
      const second = yield* collect(model, request({ ...base, functionHistory: [entry(1)] }))
      assert.notInclude(server.requests[0]!.body, "cache_control")
      assert.notInclude(server.requests[1]!.body, "cache_control")
      assert.deepStrictEqual(fake.ledger.map((account) => account.cacheReadInputTokens + account.cacheCreationInputTokens), [0, 0])
      const usage = second.events.find((event) => event._tag === "Usage")
      assert.deepStrictEqual(usage?._tag === "Usage" ? usage.usage : undefined, {
        inputTokens: fake.ledger[1]!.totalInputTokens,
        outputTokens: 12,
        totalTokens: fake.ledger[1]!.totalInputTokens + 12
      })
    }))

  it.live("layerConfig defaults to on", () =>
    Effect.gen(function*() {
      const { server } = yield* chain
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_BASE_URL", server.url]]) })
      const model = yield* buildModel(Anthropic.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config))))
      yield* collect(model, request({ system: longSystem }))
      assert.include(server.requests[0]!.body, "\"cache_control\":{\"type\":\"ephemeral\"}")
    }))

  it.effect("a bad ANTHROPIC_PROMPT_CACHE fails at start-up naming the variable", () =>
    Effect.gen(function*() {
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["ANTHROPIC_PROMPT_CACHE", "sometimes"]]) })
      const error = yield* Layer.build(Layer.provide(Anthropic.layerConfig(), HttpLive)).pipe(
        Effect.provide(ConfigProvider.layer(config)),
        Effect.scoped,
        Effect.flip
      )
      assert.include(String(error), "ANTHROPIC_PROMPT_CACHE")
    }))
})
