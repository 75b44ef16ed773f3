import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot } from "./cliProcess"

interface PipedRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * `node dist/main.js …` with stdout on a real pipe whose reader stalls for a while first, so
 * the pipe fills and the process has to wait for it before it may exit (a pipe is written
 * asynchronously: exiting early hands the reader only the first 64 KiB).
 */
const runPiped = (args: ReadonlyArray<string>, env: Record<string, string>, stallMs: number): Promise<PipedRun> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(repoRoot, "dist/main.js"), ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? repoRoot, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env }
    })
    const out: Array<Buffer> = []
    const err: Array<Buffer> = []
    child.stdout.pause()
    setTimeout(() => child.stdout.resume(), stallMs)
    child.stdout.on("data", (chunk: Buffer) => out.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => err.push(chunk))
    const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") })
    })
  })

const scriptFile = (name: string, script: unknown): string => {
  const path = join(tmpdir(), `loopcord-${process.pid}-${name}.json`)
  writeFileSync(path, JSON.stringify(script))
  return path
}

describe("the --once --json report arrives whole through a pipe, whatever its size", () => {
  it("[issue 25] a 1 MiB reply: exactly one JSON line, every character of the text", async () => {
    const text = "pelican ".repeat(131_000)
    const script = scriptFile("reply", { passes: [[{ text }, { finish: "stop" }]] })
    const run = await runPiped(["--once", "say a lot", "--json"], { LLM_PROVIDER: "scripted", LLM_SCRIPT: script }, 400)
    assert.strictEqual(run.code, 0, run.stderr)
    assert.isTrue(run.stdout.endsWith("\n"))
    const lines = run.stdout.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1)
    const report = JSON.parse(lines[0] ?? "")
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text.length, text.length - 1, "the reply is trimmed of its last space, nothing else")
  }, 60_000)

  it("[issue 25] a report of several MB (long tool results) arrives whole", async () => {
    const page = "The quick brown fox jumps over the lazy dog. ".repeat(23_000)
    const server = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/plain; charset=utf-8" })
      response.end(page)
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/long.txt`
    const fetches = 4
    const script = scriptFile("tools", {
      passes: [
        ...Array.from({ length: fetches }, (_, index) => [{ toolCall: { name: "fetch_url", args: { url: `${url}?n=${index}` }, id: `call_${index}` } }]),
        [{ text: "Read them all." }, { finish: "stop" }]
      ]
    })
    const run = await runPiped(["--once", "read these", "--json"], {
      LLM_PROVIDER: "scripted",
      LLM_SCRIPT: script,
      // The page is on loopback: only an explicit development run may fetch it.
      RUN_ENV: "development",
      FETCH_URL_MAX_CONTENT_LENGTH: String(page.length)
    }, 400).finally(() => new Promise<void>((resolve) => server.close(() => resolve())))
    assert.strictEqual(run.code, 0, run.stderr)
    const lines = run.stdout.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1)
    assert.isAbove(run.stdout.length, 3 * 1024 * 1024, "several MB")
    const report = JSON.parse(lines[0] ?? "")
    assert.strictEqual(report.status, "completed")
    assert.strictEqual(report.text, "Read them all.")
    assert.strictEqual(report.toolCalls.length, fetches)
    for (const call of report.toolCalls) {
      assert.isTrue(call.success)
      assert.include(JSON.stringify(call.response), "lazy dog. The quick brown fox")
    }
  }, 60_000)
})
