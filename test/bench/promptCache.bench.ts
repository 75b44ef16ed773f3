/**
 * Anthropic prompt caching over a 10-pass tool chain (issue 14 item 4): the saving on input
 * cost with `ANTHROPIC_PROMPT_CACHE` on vs off, measured against the token counts of the
 * loopback fake (`test/support/fakeProviders/anthropicCache.ts`, which implements Anthropic's
 * cache accounting: a prefix per breakpoint, 20-block look-back, 1024-token floor, reads 0.1×
 * and writes 1.25× of the base input price).
 *
 * Each run is a real turn: runGenerationTurn → runToolLoop → the Anthropic provider over HTTP;
 * the fake answers passes 1–9 with an `echo_tool` call and pass 10 with the reply. Cost is in
 * base-input-token units (output tokens are the same either way and left out). The same turn
 * must send the same input tokens with caching on and off, and the usage loopcord reports
 * must equal the fake's counts, before a number is printed.
 */
import { Effect, Layer, References, Schema } from "effect"
import { toolSuccess } from "../../src/domain/ToolResult"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import * as Anthropic from "../../src/provider/anthropic/Anthropic"
import { providerHttpClient } from "../../src/provider/providerHttpClient"
import { makeTool, type Tool } from "../../src/tools/Tool"
import { withLoopHarness } from "../loop/harness"
import { textBlock, toolUseBlock } from "../support/fakeProviders/anthropic"
import { type CacheAccount, CACHE_READ_PRICE, CACHE_WRITE_PRICE, cachedCost, cachingAnthropic, uncachedCost } from "../support/fakeProviders/anthropicCache"
import { startFakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { check, fmt, loadLine } from "./support/stats"

const PASSES = 10

interface Scenario {
  readonly name: string
  readonly systemPrompt: string
  readonly tools: ReadonlyArray<Tool>
  /** Characters of each echo result (a search result or page excerpt is a few hundred tokens). */
  readonly resultChars: number
}

const filler = (topic: string, chars: number): string => {
  const sentence = `Rule about ${topic}: answer in the persona's voice, cite what the tools returned, never invent facts. `
  return sentence.repeat(Math.ceil(chars / sentence.length)).slice(0, chars)
}

const echoTool = (resultChars: number): Tool =>
  makeTool({
    name: "echo_tool",
    description: "Echoes the text back with the stored notes about it.",
    category: "utility",
    parameters: Schema.Struct({ text: Schema.String }),
    execute: ({ text }) => Effect.succeed(toolSuccess({ echoed: text, notes: filler(text, resultChars) }))
  })

/** Tools the model is offered but does not call: their declarations are part of every request. */
const declaredTool = (name: string, descriptionChars: number): Tool =>
  makeTool({
    name,
    description: filler(name, descriptionChars),
    category: "utility",
    parameters: Schema.Struct({ query: Schema.String, limit: Schema.optional(Schema.Number), locale: Schema.optional(Schema.String) }),
    execute: () => Effect.succeed(toolSuccess())
  })

const scenarios: ReadonlyArray<Scenario> = [
  {
    name: "bot persona (system ≈ 1.5k tokens, 8 tools ≈ 2.5k tokens, results ≈ 250 tokens)",
    systemPrompt: filler("the persona", 6000),
    tools: [echoTool(1000), ...["web_search", "fetch_url", "update_short_term_memory", "select_sticker", "generate_image", "block_user", "unblock_user"].map((name) => declaredTool(name, 1200))],
    resultChars: 1000
  },
  {
    name: "small bot (system ≈ 250 tokens, 3 tools ≈ 450 tokens, results ≈ 250 tokens)",
    systemPrompt: filler("the persona", 1000),
    tools: [echoTool(1000), ...["web_search", "fetch_url"].map((name) => declaredTool(name, 600))],
    resultChars: 1000
  },
  {
    name: "short prompt (system ≈ 50 tokens, 1 tool, results ≈ 25 tokens)",
    systemPrompt: "You are a helpful assistant in a chat. Use the tools when they help.",
    tools: [echoTool(100)],
    resultChars: 100
  }
]

interface Run {
  readonly ledger: ReadonlyArray<CacheAccount>
  readonly text: string
  readonly usage: { readonly input: number; readonly cached: number; readonly written: number }
}

const runTurn = async (scenario: Scenario, promptCache: boolean): Promise<Run> => {
  const server = await startFakeLlmServer()
  const fake = cachingAnthropic({
    reply: (request) => {
      const body = request.json as { messages: ReadonlyArray<{ content: unknown }> }
      const calls = body.messages.filter((turn) => JSON.stringify(turn.content).includes("\"tool_use\"")).length
      return calls < PASSES - 1
        ? {
          content: toolUseBlock(0, { id: `toolu_${calls + 1}`, name: "echo_tool" }, [JSON.stringify({ text: `step ${calls + 1}` })]),
          stopReason: "tool_use",
          outputTokens: 20
        }
        : { content: textBlock(0, [`All ${calls} steps echoed.`]), stopReason: "end_turn", outputTokens: 8 }
    }
  })
  server.setHandler(fake.handler)
  try {
    const turnLayer = Layer.mergeAll(
      Anthropic.layer({ baseUrl: server.url, promptCache }).pipe(Layer.provide(providerHttpClient())),
      RoutePlan.make(["claude-bench"], ["bench-key"]),
      KeyPool.Default
    )
    const result = await Effect.runPromise(
      withLoopHarness({
        tools: scenario.tools,
        script: [],
        turn: { persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: scenario.systemPrompt } },
        contextItems: [
          { role: "user", name: "ana", content: "Hi! Can you echo ten steps for me, one tool call each?" },
          { role: "assistant", content: "Sure, tell me when." },
          { role: "user", name: "ana", content: "Now, please." }
        ]
      }, () => runGenerationTurn().pipe(Effect.provide(turnLayer))).pipe(
        Effect.scoped,
        Effect.provideService(References.MinimumLogLevel, "Warn")
      )
    )
    check(result.status === "completed", `turn ${result.status}`)
    check(result.iterations === PASSES, `${result.iterations} passes, expected ${PASSES}`)
    check(fake.ledger.length === PASSES, `${fake.ledger.length} requests`)
    const usage = result.usage!
    return {
      ledger: [...fake.ledger],
      text: result.text,
      usage: { input: usage.inputTokens, cached: usage.cachedInputTokens ?? 0, written: usage.cacheWriteTokens ?? 0 }
    }
  } finally {
    await server.close()
  }
}

const sum = (ledger: ReadonlyArray<CacheAccount>, pick: (entry: CacheAccount) => number) =>
  ledger.reduce((total, entry) => total + pick(entry), 0)

const main = async () => {
  const lines: Array<string> = [
    "## promptCache.bench.ts — Anthropic prompt caching over a 10-pass tool chain",
    "",
    `${loadLine()} Each row is one real turn (runGenerationTurn → runToolLoop → the Anthropic provider over loopback HTTP): passes 1–9 call \`echo_tool\`, pass 10 answers. ` +
    "Token counts are the fake's (4 characters a token over each block's JSON, Anthropic's cache rules); cost is input cost in base-input-token units " +
    `(cache reads ${CACHE_READ_PRICE}×, writes ${CACHE_WRITE_PRICE}×; output is the same either way and left out). Breakpoints with caching on: the last tool, the system prompt, the newest tool result.`,
    "",
    "| scenario | input tokens over 10 passes | cache off: cost | cache on: uncached / read / written | cache on: cost | saving | pass 1 cost on / off |",
    "|---|---:|---:|---:|---:|---:|---:|"
  ]
  for (const scenario of scenarios) {
    const off = await runTurn(scenario, false)
    const on = await runTurn(scenario, true)
    check(sum(off.ledger, (entry) => entry.totalInputTokens) === sum(on.ledger, (entry) => entry.totalInputTokens), "the same input with caching on and off")
    check(off.text === on.text, "the same reply")
    check(sum(off.ledger, (entry) => entry.cacheReadInputTokens + entry.cacheCreationInputTokens) === 0, "nothing cached with caching off")
    // loopcord's reported usage is the fake's accounting, summed over the passes.
    check(on.usage.input === sum(on.ledger, (entry) => entry.totalInputTokens), "reported input tokens")
    check(on.usage.cached === sum(on.ledger, (entry) => entry.cacheReadInputTokens), "reported cache reads")
    check(on.usage.written === sum(on.ledger, (entry) => entry.cacheCreationInputTokens), "reported cache writes")
    const offCost = uncachedCost(off.ledger)
    const onCost = cachedCost(on.ledger)
    const saving = 1 - onCost / offCost
    lines.push(
      `| ${scenario.name} | ${sum(on.ledger, (entry) => entry.totalInputTokens)} | ${fmt(offCost, 0)} | ` +
        `${sum(on.ledger, (entry) => entry.inputTokens)} / ${sum(on.ledger, (entry) => entry.cacheReadInputTokens)} / ${sum(on.ledger, (entry) => entry.cacheCreationInputTokens)} | ` +
        `${fmt(onCost, 0)} | **${fmt(saving * 100, 1)} %** | ${fmt(on.ledger[0]!.cost, 0)} / ${fmt(off.ledger[0]!.cost, 0)} |`
    )
  }
  lines.push(
    "",
    "Pass 1 pays the write premium (1.25×) on the whole prefix; every later pass reads the previous request back at 0.1× and writes only its own new blocks (the previous call and result), so the saving grows with the chain's length and with the share of the prompt that is stable (tools, system prompt, history). A prompt under the 1024-token floor is not cached until the history carries it past the floor."
  )
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
