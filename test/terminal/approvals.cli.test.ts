import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { repoRoot } from "./cliProcess"

/** `node dist/main.js` (the interactive chat, what `npm start` runs) with `lines` piped in. */
const chat = (env: Record<string, string>, lines: ReadonlyArray<string>) =>
  new Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ["dist/main.js"], {
      cwd: repoRoot,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? repoRoot, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (piece: Buffer) => (stdout += piece.toString("utf8")))
    child.stderr.on("data", (piece: Buffer) => (stderr += piece.toString("utf8")))
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(lines.map((line) => `${line}\n`).join(""))
  })

describe("tool approvals in the terminal chat (child process)", () => {
  it("/approvals add fetch_url: the call asks [y/N]; y runs it, anything else does not", async () => {
    const hits: Array<string> = []
    const page = createServer((request, response) => {
      hits.push(request.url ?? "")
      response.writeHead(200, { "content-type": "text/html" })
      response.end("<html><body><main><p>The page says hello.</p></main></body></html>")
    })
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", () => resolve()))
    const base = `http://127.0.0.1:${(page.address() as AddressInfo).port}`
    const fetchPass = (path: string) => [{ toolCall: { name: "fetch_url", args: { url: `${base}${path}` } } }, { finish: "tool_calls" }]
    const run = await chat({
      LLM_PROVIDER: "scripted",
      LLM_SCRIPT: JSON.stringify({ passes: [fetchPass("/first"), "First answer.", fetchPass("/second"), "Second answer."] }),
      // The page is on loopback: fetch_url may reach it only in development with private networks allowed.
      RUN_ENV: "development",
      FETCH_URL_ALLOW_PRIVATE_NETWORK: "true"
    }, ["/approvals add fetch_url", "read the page", "y", "read it again", "n"]).finally(() => new Promise<void>((resolve) => page.close(() => resolve())))
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "fetch_url now asks before it runs")
    assert.strictEqual(run.stdout.split("🔐 run fetch_url").length - 1, 2, run.stdout)
    assert.include(run.stdout, "[y/N]")
    // The approved call fetched its page; the denied one never reached the server.
    assert.isTrue(hits.includes("/first"), run.stdout)
    assert.isFalse(hits.includes("/second"), run.stdout)
    assert.include(run.stdout, "⛔ fetch_url not run")
    assert.include(run.stdout, "First answer.")
    assert.include(run.stdout, "Second answer.")
  }, 40_000)
})
