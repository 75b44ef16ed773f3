import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

import { textBlock, toolUseBlock } from "../support/fakeProviders/anthropic"
import { cachingAnthropic } from "../support/fakeProviders/anthropicCache"
import { startFakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { novelAiStory } from "../support/fakeProviders/novelAi"
import { completed, created, functionCallItem, messageItem, reasoningItem, responsesStream, responsesUsage } from "../support/fakeProviders/openAiResponses"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `node dist/main.js …` (what `npm start` runs) as a real child process with only the variables given (as in cli.test.ts). */
const start = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile(process.execPath, ["dist/main.js", ...args], {
      cwd: root,
      timeout: 90_000,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env }
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr })
    })
  })

/** Two loopback pages for a two-tool chain (fetch_url twice). */
const pages = async (): Promise<{ readonly urls: readonly [string, string]; readonly server: Server }> => {
  const server = createServer((request, response) => {
    response.writeHead(200, { "content-type": "text/html" })
    response.end(request.url === "/a"
      ? "<html><body><main><h1>Page A</h1><p>The first word is pelican.</p></main></body></html>"
      : "<html><body><main><h1>Page B</h1><p>The second word is walrus.</p></main></body></html>")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { urls: [`${base}/a`, `${base}/b`], server }
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()))

const report = (run: Run) => {
  const lines = run.stdout.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, run.stderr)
  return JSON.parse(lines[0] ?? "")
}

describe("--once --json on the second-wave providers (child process, issue 14)", () => {
  it("[14.2] LLM_PROVIDER=openai-responses: a two-tool chain (fetch_url twice) over the Responses API fake; usage with cached and reasoning tokens", async () => {
    const site = await pages()
    const llm = await startFakeLlmServer()
    const [a, b] = site.urls
    llm.enqueue(
      responsesStream([
        created(),
        ...reasoningItem("rs_1", ["Read page A first."], { encrypted: "gAAAA-enc-1" }),
        ...functionCallItem({ id: "fc_1", callId: "call_a", name: "fetch_url" }, [JSON.stringify({ url: a }).slice(0, 9), JSON.stringify({ url: a }).slice(9)], { outputIndex: 1 }),
        completed({ usage: responsesUsage(400, 30, { reasoning: 12 }) })
      ]),
      responsesStream([
        created(),
        ...functionCallItem({ id: "fc_2", callId: "call_b", name: "fetch_url" }, [JSON.stringify({ url: b })]),
        completed({ usage: responsesUsage(600, 20, { cached: 384 }) })
      ]),
      responsesStream([created(), ...messageItem("msg_1", ["The words are ", "pelican and walrus."]), completed({ usage: responsesUsage(800, 9, { cached: 512 }) })])
    )
    const run = await start(["--once", "what do the two pages say?", "--json"], {
      LLM_PROVIDER: "openai-responses",
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_API_KEYS: "test-key-1",
      LLM_MODELS: "gpt-test",
      RUN_ENV: "development"
    }).finally(async () => {
      await llm.close()
      await closeServer(site.server)
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const result = report(run)
    assert.strictEqual(result.status, "completed")
    assert.strictEqual(result.text, "The words are pelican and walrus.")
    assert.strictEqual(result.iterations, 3)
    assert.deepStrictEqual(result.toolCalls.map((call: { name: string; success: boolean }) => [call.name, call.success]), [["fetch_url", true], ["fetch_url", true]])
    assert.include(result.toolCalls[1].response.summary, "walrus")
    assert.deepStrictEqual(result.usage, { inputTokens: 1800, outputTokens: 59, totalTokens: 1859, cachedInputTokens: 896, cacheWriteTokens: 0, reasoningTokens: 12 })
    assert.strictEqual(llm.requests.length, 3)
    const last = llm.requests[2]!.json as { input: ReadonlyArray<Record<string, unknown>>; store: boolean }
    assert.strictEqual(last.store, false)
    assert.deepStrictEqual(last.input.filter((item) => item.type !== undefined).map((item) => [item.type, item.call_id]), [
      ["reasoning", undefined],
      ["function_call", "call_a"],
      ["function_call_output", "call_a"],
      ["function_call", "call_b"],
      ["function_call_output", "call_b"]
    ])
    assert.include(String(last.input.find((item) => item.call_id === "call_b" && item.type === "function_call_output")?.output), "walrus")
  }, 90_000)

  it("[14.3] LLM_PROVIDER=novelai: a reply streamed in several fragments, completed within its budget; no tools", async () => {
    const story = " Hello there! Mira here. The kettle is on, the cakes are fresh, and the rain has finally stopped outside. What can I get you?".split(/(?= )/)
    const fake = novelAiStory(story)
    const llm = await startFakeLlmServer({ handler: fake.handler })
    const run = await start(["--once", "hi!", "--json"], {
      LLM_PROVIDER: "novelai",
      LLM_BASE_URL: llm.url,
      LLM_API_KEYS: "nai-key",
      LLM_MODELS: "llama-3-erato-v1",
      NOVELAI_FRAGMENT_TOKENS: "6",
      NOVELAI_MAX_OUTPUT_TOKENS: "100",
      BOT_PERSONA_NAME: "Mira"
    }).finally(() => llm.close())
    assert.strictEqual(run.code, 0, run.stderr)
    const result = report(run)
    assert.strictEqual(result.status, "completed")
    assert.strictEqual(result.text, story.join("").trim())
    assert.strictEqual(result.iterations, 1)
    assert.deepStrictEqual(result.toolCalls, [])
    assert.strictEqual(result.usage.outputTokens, story.length)
    // Full fragments continue; the session ends at the first one that comes short (here: empty).
    assert.strictEqual(fake.fragments.length, Math.floor(story.length / 6) + 1)
    for (const sent of llm.requests) {
      assert.strictEqual(sent.path, "/ai/generate-stream")
      assert.strictEqual(sent.headers.authorization, "Bearer nai-key")
      assert.notProperty(sent.json as object, "tools")
    }
    const input = (llm.requests[0]!.json as { input: string }).input
    assert.isTrue(input.endsWith("\nMira:"), input)
    assert.notInclude(input, "fetch_url")
  }, 90_000)

  it("[14.4] LLM_PROVIDER=anthropic with prompt caching on by default: a two-tool chain reads the cached prefix; cache reads and writes in the report", async () => {
    const site = await pages()
    const [a, b] = site.urls
    const fake = cachingAnthropic({
      reply: (_request, index) =>
        index < 2
          ? { content: toolUseBlock(0, { id: `toolu_${index + 1}`, name: "fetch_url" }, [JSON.stringify({ url: index === 0 ? a : b })]), stopReason: "tool_use", outputTokens: 20 }
          : { content: textBlock(0, ["The words are pelican and walrus."]), stopReason: "end_turn", outputTokens: 9 }
    })
    const llm = await startFakeLlmServer({ handler: fake.handler })
    const run = await start(["--once", "what do the two pages say?", "--json"], {
      LLM_PROVIDER: "anthropic",
      LLM_BASE_URL: llm.url,
      LLM_API_KEYS: "ant-key",
      LLM_MODELS: "claude-test",
      RUN_ENV: "development",
      // A persona prompt long enough to be cached (over the 1024-token floor on its own).
      BOT_SYSTEM_PROMPT: "You are a careful assistant. Quote the pages you read. ".repeat(90)
    }).finally(async () => {
      await llm.close()
      await closeServer(site.server)
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const result = report(run)
    assert.strictEqual(result.status, "completed")
    assert.strictEqual(result.toolCalls.length, 2)
    const sum = (pick: (entry: (typeof fake.ledger)[number]) => number) => fake.ledger.reduce((total, entry) => total + pick(entry), 0)
    assert.isAbove(sum((entry) => entry.cacheReadInputTokens), 2000)
    assert.deepStrictEqual(result.usage, {
      inputTokens: sum((entry) => entry.totalInputTokens),
      outputTokens: 49,
      totalTokens: sum((entry) => entry.totalInputTokens) + 49,
      cachedInputTokens: sum((entry) => entry.cacheReadInputTokens),
      cacheWriteTokens: sum((entry) => entry.cacheCreationInputTokens),
      reasoningTokens: 0
    })
  }, 90_000)
})

describe("--once --json with reasoning written into the text (child process)", () => {
  it("LLM_PROVIDER=openai-compatible: a <think> block split across deltas is not in the text and is counted as reasoning tokens", async () => {
    const llm = await startFakeLlmServer()
    const { finishChunk, openAiStream, textChunk, usageChunk } = await import("../support/fakeProviders/openAiCompatible")
    llm.enqueue(openAiStream([
      textChunk("<thi"),
      textChunk("nk>The user greets me; "),
      textChunk("greet back.</thi"),
      textChunk("nk>\n\nHello!"),
      finishChunk("stop"),
      usageChunk(10, 20)
    ], { splitSizes: [4] }))
    const run = await start(["--once", "hi", "--json"], {
      LLM_PROVIDER: "openai-compatible",
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_MODELS: "qwen3"
    }).finally(() => llm.close())
    assert.strictEqual(run.code, 0, run.stderr)
    const result = report(run)
    assert.strictEqual(result.text, "Hello!")
    // 31 characters of reasoning, estimated at 4 per token: 8 of the 20 output tokens.
    assert.deepStrictEqual(result.usage, { inputTokens: 10, outputTokens: 20, totalTokens: 30, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 8 })
  })
})
