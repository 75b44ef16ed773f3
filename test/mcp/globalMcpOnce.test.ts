import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { startFakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk, toolCallChunk, usageChunk } from "../support/fakeProviders/openAiCompatible"
import { startHangingServer, startSseServer, startStreamableServer } from "../support/mcpServers/httpServers"
import { prefixedTools } from "../support/mcpServers/testTools"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const stdioServer = join(root, "test", "support", "mcpServers", "stdioServer.ts")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  readonly elapsedMs: number
}

/** `node dist/main.js --once … --json` (what `npm start` runs) as a user runs it, with only the given variables. */
const once = (text: string, env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    const started = performance.now()
    execFile(process.execPath, ["dist/main.js", "--once", text, "--json"], {
      cwd: root,
      timeout: 90_000,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env }
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr, elapsedMs: performance.now() - started })
    })
  })

const call = (id: string, name: string, args: Record<string, unknown>) =>
  openAiStream([toolCallChunk({ index: 0, id, name, arguments: JSON.stringify(args) }), finishChunk("tool_calls"), usageChunk(10, 5)])

interface DeclaredRequest {
  readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
}

describe("--once with MCP_SERVERS (design decision 14, child process)", () => {
  it("a turn started at once declares the tools of a Streamable HTTP, an SSE-only and a stdio server and gets their results", async () => {
    const http = await startStreamableServer({ tools: prefixedTools("http_") })
    const sse = await startSseServer({ tools: prefixedTools("sse_") })
    const llm = await startFakeLlmServer()
    llm.enqueue(
      call("call_1", "http_add_numbers", { a: 2, b: 3 }),
      call("call_2", "sse_echo", { text: "over sse" }),
      call("call_3", "stdio_add_numbers", { a: 40, b: 2 }),
      openAiStream([textChunk("All three answered."), finishChunk("stop"), usageChunk(20, 4)])
    )
    const servers = [
      { name: "remote", url: http.url },
      { name: "legacy", url: sse.url, transport: "sse" },
      { name: "local", transport: "stdio", command: process.execPath, args: ["--import", "tsx", stdioServer, "stdio_"] }
    ]
    const run = await once("use the tools", {
      LLM_PROVIDER: "openai-compatible",
      LLM_BASE_URL: `${llm.url}/v1`,
      LLM_API_KEYS: "test-key",
      LLM_MODELS: "test-model",
      MCP_SERVERS: JSON.stringify(servers)
    }).finally(() => Promise.all([http.close(), sse.close(), llm.close()]))

    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim()) as {
      status: string
      text: string
      toolCalls: ReadonlyArray<{ name: string; success: boolean; response: { summary?: string } }>
    }
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, "All three answered.")
    const declared = ((llm.requests[0]?.json as DeclaredRequest).tools ?? []).map((tool) => tool.function.name)
    for (const prefix of ["http_", "sse_", "stdio_"]) {
      for (const name of ["echo", "add_numbers", "explode", "structured", "slow"]) assert.include(declared, `${prefix}${name}`, "declared on the very first request")
    }
    assert.deepStrictEqual(report.toolCalls.map((entry) => [entry.name, entry.success, entry.response.summary]), [
      ["http_add_numbers", true, "The sum of 2 and 3 is 5."],
      ["sse_echo", true, "echo: over sse"],
      ["stdio_add_numbers", true, "The sum of 40 and 2 is 42."]
    ])
    assert.deepStrictEqual(http.log.toolCalls.map((entry) => entry.name), ["http_add_numbers"])
    assert.deepStrictEqual(sse.log.toolCalls.map((entry) => entry.name), ["sse_echo"])
  }, 120_000)

  it("a dead (hanging) server costs at most MCP_STARTUP_WAIT_MS; the turn runs with the servers that answered", async () => {
    const hanging = await startHangingServer()
    const http = await startStreamableServer({ tools: prefixedTools("http_") })
    const script = JSON.stringify({ passes: [[{ toolCall: { name: "http_echo", args: { text: "still here" } } }], "done"] })
    const run = await once("go", {
      LLM_PROVIDER: "scripted",
      LLM_SCRIPT: script,
      MCP_SERVERS: JSON.stringify([{ name: "dead", url: hanging.url }, { name: "remote", url: http.url }]),
      MCP_STARTUP_WAIT_MS: "2000"
    }).finally(() => Promise.all([hanging.close(), http.close()]))

    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim()) as { toolCalls: ReadonlyArray<{ name: string; success: boolean; response: { summary?: string } }> }
    assert.deepStrictEqual(report.toolCalls.map((entry) => [entry.name, entry.success, entry.response.summary]), [["http_echo", true, "echo: still here"]])
    assert.include(run.stderr, `Global MCP server 'dead' (http://127.0.0.1:${hanging.port}) is still connecting after MCP_STARTUP_WAIT_MS=2000`)
    assert.isAtLeast(hanging.log.requests.length, 1, "the dead server was tried")
    // The dead server's own connect timeout is 60 s: the run ends long before it.
    assert.isBelow(run.elapsedMs, 45_000)
  }, 120_000)
})
