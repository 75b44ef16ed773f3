import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * The public contract, exercised as a user would: `npx tsx src/main.ts …` as a real child
 * process with only the variables given (no DISCORD_TOKEN, no provider keys from the host).
 */
const start = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Run> =>
  new Promise((resolve) => {
    execFile("npx", ["tsx", "src/main.ts", ...args], {
      cwd: root,
      timeout: 60_000,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", ...env }
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
    assert.deepStrictEqual(Object.keys(report), ["status", "text", "iterations", "attempts", "toolCalls", "usage"])
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, "You said: hi")
    assert.deepStrictEqual(report.attempts, [{ model: "scripted", keyIndex: 0, status: "completed" }])
    assert.deepStrictEqual(report.toolCalls, [])
    assert.deepStrictEqual(Object.keys(report.usage), ["inputTokens", "outputTokens", "totalTokens"])
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

  it("[5.2] a bad environment value fails start-up with exactly one line naming the variable", async () => {
    const run = await start(["--once", "hi", "--json"], { LLM_PROVIDER: "scripted", BOT_MAX_CONSECUTIVE_TOOL_ERRORS: "many" })
    assert.notStrictEqual(run.code, 0)
    assert.strictEqual(run.stdout, "")
    const lines = run.stderr.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1, run.stderr)
    assert.include(lines[0], "BOT_MAX_CONSECUTIVE_TOOL_ERRORS")
    assert.notInclude(run.stderr, "    at ")
  }, 60_000)
})
