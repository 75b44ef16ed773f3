import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

import { startFakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk, toolCallChunk, usageChunk } from "../support/fakeProviders/openAiCompatible"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * The public contract, exercised as a user would: `node dist/main.js …` (what `npm start` runs;
 * the test setup builds dist/) as a real child process with only the variables given (no
 * DISCORD_TOKEN, no provider keys from the host).
 */
const start = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile(process.execPath, ["dist/main.js", ...args], {
      cwd: root,
      timeout: 60_000,
      // An in-memory database: a test run leaves no ./data behind.
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env }
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr })
    })
  })

describe("npm start --silent -- --once TEXT --json (design §5.1, child process)", () => {
  it("[5.1] prints exactly one JSON line on stdout and exits 0 when the turn completes", async () => {
    const run = await start(["--once", "hi", "--json"], { LLM_PROVIDER: "scripted" })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(run.stdout.endsWith("\n"))
    const lines = run.stdout.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1)
    const report = JSON.parse(lines[0] ?? "")
    assert.deepStrictEqual(Object.keys(report), ["status", "text", "iterations", "attempts", "toolCalls", "usage", "context"])
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, "You said: hi")
    assert.deepStrictEqual(report.attempts, [{ model: "scripted", keyIndex: 0, status: "completed" }])
    assert.deepStrictEqual(report.toolCalls, [])
    assert.deepStrictEqual(Object.keys(report.usage), [
      "inputTokens",
      "outputTokens",
      "totalTokens",
      "cachedInputTokens",
      "cacheWriteTokens",
      "reasoningTokens"
    ])
  }, 60_000)

  it("[65][5.1] a fallback chain from LLM_MODELS and a tool call from LLM_SCRIPT; logs stay on stderr; exit 1 when not completed", async () => {
    const script = JSON.stringify({
      passes: [
        [{ text: "Let me look. " }, { toolCall: { name: "web_serch", args: { q: "x" } } }],
        [{ error: { reason: "Server", detail: "upstream 502", status: 502 } }],
        [{ error: { reason: "Server", detail: "still down", status: 502 } }]
      ]
    })
    const run = await start(["--once", "find x", "--json"], { LLM_PROVIDER: "scripted", LLM_MODELS: "primary,fallback", LLM_SCRIPT: script })
    assert.strictEqual(run.code, 1)
    const lines = run.stdout.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1, "logs never reach stdout")
    const report = JSON.parse(lines[0] ?? "")
    assert.strictEqual(report.status, "error")
    assert.deepStrictEqual(report.attempts, [
      { model: "primary", keyIndex: 0, status: "error" },
      { model: "fallback", keyIndex: 0, status: "error" }
    ])
    assert.strictEqual(report.iterations, 3)
    assert.strictEqual(report.toolCalls[0].name, "web_serch")
    assert.strictEqual(report.toolCalls[0].response.status, "tool_execution_failed", "the exact payload the model saw")
    assert.include(run.stderr, "still down")
  }, 60_000)

  it("[5.2] a bad environment value fails start-up with exactly one line naming the variable, before anything starts", async () => {
    const bad: ReadonlyArray<readonly [string, string]> = [
      ["BOT_MAX_CONSECUTIVE_TOOL_ERRORS", "many"],
      ["DATABASE_URL", "mysql://localhost/loopcord"],
      ["FETCH_URL_TIMEOUT_MS", "soon"],
      ["MCP_SERVERS", "[{\"name\":"],
      ["LLM_TOOL_CALLING", "sometimes"],
      ["LLM_CONTEXT_TOKENS", "qwen3=lots"],
      ["CONTEXT_COMPACTION", "squash"],
      // 12 bytes, not 32: the key value itself is never printed.
      ["LOOPCORD_SECRET_KEY", "c2hvcnQtc2VjcmV0"]
    ]
    const runs = await Promise.all(bad.map(([name, value]) => start(["--once", "hi", "--json"], { LLM_PROVIDER: "scripted", [name]: value })))
    for (const [index, run] of runs.entries()) {
      const name = bad[index]?.[0] ?? ""
      assert.notStrictEqual(run.code, 0, name)
      assert.strictEqual(run.stdout, "", name)
      const lines = run.stderr.trimEnd().split("\n")
      assert.strictEqual(lines.length, 1, run.stderr)
      assert.include(lines[0], name)
      if (name === "LOOPCORD_SECRET_KEY") assert.notInclude(run.stderr, bad[index]?.[1] ?? "", "a secret is never echoed")
      assert.notInclude(run.stderr, "    at ")
    }
  }, 180_000)

  it("[issue 23][5.1] LLM_CONTEXT_TOKENS: a message longer than the window is cut, and the report's context says so", async () => {
    const message = `${"word ".repeat(6_000)}what is this?`
    const run = await start(["--once", message, "--json"], { LLM_PROVIDER: "scripted", LLM_CONTEXT_TOKENS: "scripted=2048" })
    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trimEnd())
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.context.window, 2048)
    assert.strictEqual(report.context.windowSource, "setting")
    assert.strictEqual(report.context.cutUserMessage.totalChars, message.length)
    assert.isBelow(report.context.cutUserMessage.keptChars, message.length)
    assert.isAtLeast(report.context.elidedItems, 1)
    // The scripted echo answers what it was sent: the cut message, with its marker.
    assert.include(report.text, "characters of this message were left out")
    assert.include(run.stderr, "your message is longer than the model can read at once")
  }, 60_000)

  it("[4][5.1] an OpenAI-compatible server configured only through env: a fetch_url round trip over loopback, keys and model on the wire", async () => {
    // Above the inline threshold, so the compiled HTML worker thread (dist/htmlToMarkdownWorker.js) converts it.
    const filler = Array.from({ length: 1200 }, (_, index) => `<p>Filler paragraph ${index} pads the page past the worker threshold.</p>`).join("")
    const page = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" })
      response.end(`<html><body><main><h1>Loopback page</h1><p>The secret word is pelican.</p>${filler}</main></body></html>`)
    })
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve))
    const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/article`
    const llm = await startFakeLlmServer()
    llm.enqueue(
      openAiStream([textChunk("Let me read it. "), toolCallChunk({ index: 0, id: "call_1", name: "fetch_url", arguments: JSON.stringify({ url: pageUrl }) }), finishChunk("tool_calls"), usageChunk(30, 8)]),
      openAiStream([textChunk("The secret word is pelican."), finishChunk("stop"), usageChunk(60, 7)])
    )
    const run = await start(["--once", "what does the page say?", "--json"], {
      LLM_PROVIDER: "openai-compatible",
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_API_KEYS: "test-key-1",
      LLM_MODELS: "test-model",
      // The page is on loopback: only an explicit development run may fetch it (design decision 12).
      RUN_ENV: "development"
    }).finally(async () => {
      await llm.close()
      await new Promise<void>((resolve) => page.close(() => resolve()))
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim())
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, "The secret word is pelican.")
    assert.deepStrictEqual(report.attempts, [{ model: "test-model", keyIndex: 0, status: "completed" }])
    assert.strictEqual(report.toolCalls.length, 1)
    assert.strictEqual(report.toolCalls[0].name, "fetch_url")
    assert.isTrue(report.toolCalls[0].success)
    assert.include(report.toolCalls[0].response.summary, "# Loopback page")
    assert.deepStrictEqual(report.usage, {
      inputTokens: 90,
      outputTokens: 15,
      totalTokens: 105,
      cachedInputTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: 0
    })
    assert.strictEqual(llm.requests.length, 2)
    assert.strictEqual(llm.requests[0]?.headers["authorization"], "Bearer test-key-1")
    const second = llm.requests[1]?.json as { model: string; messages: ReadonlyArray<{ role: string; content: unknown }> }
    assert.strictEqual(second.model, "test-model")
    const toolMessage = second.messages.find((message) => message.role === "tool")
    assert.include(String(toolMessage?.content), "pelican", "the page reached the model as the tool result")
  }, 60_000)

  it("[2.10][5.1] RESPONSE_DRAFTING=on: the reviewer (RESPONSE_REVIEW_MODEL) asks for a revision, only the revised reply is the answer", async () => {
    // Calls alternate author, reviewer, author, reviewer (the script is shared by both models).
    const script = JSON.stringify({
      passes: [
        "Draft one.",
        "{\"verdict\":\"revise\",\"feedback\":\"Say two.\"}",
        "Draft two.",
        "{\"verdict\":\"approve\"}"
      ]
    })
    const run = await start(["--once", "hi", "--json"], {
      LLM_PROVIDER: "scripted",
      LLM_SCRIPT: script,
      RESPONSE_DRAFTING: "on",
      RESPONSE_REVIEW_MODEL: "reviewer"
    })
    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim())
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, "Draft two.")
    assert.strictEqual(report.iterations, 2, "the reviews are not author passes")
  }, 60_000)
})
