import { assert, describe, it } from "@effect/vitest"
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { REPLY_CUT_MARKER } from "../../src/loop/passCaps"
import { runCli } from "./cliProcess"

const scriptFile = (name: string, script: unknown): string => {
  const path = join(tmpdir(), `loopcord-${process.pid}-${name}.json`)
  writeFileSync(path, JSON.stringify(script))
  return path
}

describe("--once --json: what a pass keeps of a stream that goes on", () => {
  it("[issue 25] a reply longer than the terminal shows (1 MiB) is cut there with the marker; the report stays whole", async () => {
    const piece = "0123456789abcdef".repeat(4096)
    const script = scriptFile("long-reply", { passes: [[...Array.from({ length: 24 }, () => ({ text: piece })), { finish: "stop" }]] })
    const run = await runCli(["--once", "write forever", "--json"], { LLM_PROVIDER: "scripted", LLM_SCRIPT: script })
    assert.strictEqual(run.code, 0, run.stderr)
    const report = JSON.parse(run.stdout.trim())
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, piece.repeat(24).slice(0, 1_048_576) + REPLY_CUT_MARKER.trimEnd())
    assert.include(run.stderr, "the provider streamed more reply text than the destination can show")
  }, 60_000)

  it("[issue 25] the same without --json: the terminal prints 1 MiB of the reply, then the marker", async () => {
    const piece = "0123456789abcdef".repeat(4096)
    const script = scriptFile("long-reply-plain", { passes: [[...Array.from({ length: 24 }, () => ({ text: piece })), { finish: "stop" }]] })
    const run = await runCli(["--once", "write forever"], { LLM_PROVIDER: "scripted", LLM_SCRIPT: script })
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(run.stdout, piece.repeat(24).slice(0, 1_048_576) + REPLY_CUT_MARKER + "\n")
  }, 60_000)

  it("[issue 25] STREAM_MAX_REASONING_CHARS: reasoning past it ends the pass cut (empty_response), whatever came after", async () => {
    const script = scriptFile("long-reasoning", { passes: [[{ reasoning: "hmm ".repeat(2000) }, { text: "never shown" }, { finish: "stop" }]] })
    const run = await runCli(["--once", "think", "--json"], { LLM_PROVIDER: "scripted", LLM_SCRIPT: script, STREAM_MAX_REASONING_CHARS: "2048" })
    assert.strictEqual(run.code, 1, run.stderr)
    const report = JSON.parse(run.stdout.trim())
    assert.strictEqual(report.status, "empty_response")
    assert.strictEqual(report.text, "")
    assert.include(run.stderr, "the provider streamed more reasoning than a pass keeps")
  }, 60_000)
})
