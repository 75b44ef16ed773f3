import { execFile } from "node:child_process"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const cli = fileURLToPath(new URL("../../node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url))
const client = `"${process.execPath}" --import tsx test/mcp/conformance/conformanceClient.ts`

interface Run {
  readonly code: number
  readonly output: string
}

/** Runs one scenario of the MCP client conformance suite (offline: its server listens locally). */
const runScenario = (scenario: string, env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(
      process.execPath,
      [cli, "client", "--command", client, "--scenario", scenario, "--timeout", "30000"],
      { cwd: root, env: { ...process.env, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
        resolve({ code, output: `${stdout}\n${stderr}` })
      }
    )
  })

describe("MCP client conformance (@modelcontextprotocol/conformance 0.1.13)", () => {
  it("scenario initialize passes through loopcord's guild MCP stack", async () => {
    const run = await runScenario("initialize")
    assert.strictEqual(run.code, 0, run.output)
    assert.include(run.output, "OVERALL: PASSED")
    assert.include(run.output, "Passed: 1/1")
  }, 90_000)

  it("scenario tools_call passes (add_numbers called through the ToolRegistry)", async () => {
    const run = await runScenario("tools_call")
    assert.strictEqual(run.code, 0, run.output)
    assert.include(run.output, "OVERALL: PASSED")
    assert.include(run.output, "Passed: 1/1")
    assert.match(run.output, /tool-add-numbers[^\n]*SUCCESS/)
  }, 90_000)

  it("the harness can fail: a client that skips the call fails tools_call", async () => {
    const run = await runScenario("tools_call", { LOOPCORD_CONFORMANCE_SKIP_CALL: "1" })
    assert.notStrictEqual(run.code, 0)
    assert.include(run.output, "OVERALL: FAILED")
  }, 90_000)
})
