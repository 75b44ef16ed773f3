/**
 * Hostile provider streams against `--once --json` (tracker issue 25, item 1): a loopback
 * OpenAI-compatible server answers the first request of a run with 300 MB in one shape, as fast
 * as the socket takes it, and any later request with a short reply. Each run is a fresh
 * `node dist/main.js` process; its peak resident set (getrusage maxrss, reported on exit by a
 * preload) is set against the 200 MB target, next to a plain turn's. Also shown: how much of
 * the 300 MB the server got to send before the process hung up, the wall time, and what the
 * report said. Shapes: tool-call argument deltas, `reasoning_content` deltas, reply text
 * deltas, and one SSE line that never ends.
 *
 * dist/ is built first when stale (the same check as prestart).
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { check, fmt, loadLine } from "./support/stats"

const here = dirname(fileURLToPath(import.meta.url))
const root = join(here, "..", "..")
const TOTAL_BYTES = Number(process.env.HOSTILE_TOTAL_MB ?? 300) * 1024 * 1024
const TARGET_MIB = 200
const PIECE_CHARS = 16 * 1024

type Shape = "plain" | "arguments" | "reasoning" | "text" | "endless line"

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  sse({ id: "c", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })
const filler = "a".repeat(PIECE_CHARS)

/** The opening of a hostile answer, the piece it repeats, and how a full answer would end. */
const hostile = (shape: Exclude<Shape, "plain">): { readonly head: string; readonly piece: string; readonly tail: string } => {
  switch (shape) {
    case "arguments":
      return {
        head: chunk({ role: "assistant", tool_calls: [{ index: 0, id: "call_1", type: "function", function: { name: "web_search", arguments: "{\"query\":\"" } }] }),
        piece: chunk({ tool_calls: [{ index: 0, function: { arguments: filler } }] }),
        tail: chunk({ tool_calls: [{ index: 0, function: { arguments: "\"}" } }] }) + chunk({}, "tool_calls") + "data: [DONE]\n\n"
      }
    case "reasoning":
      return { head: chunk({ role: "assistant" }), piece: chunk({ reasoning_content: filler }), tail: chunk({ content: "ok" }) + chunk({}, "stop") + "data: [DONE]\n\n" }
    case "text":
      return { head: chunk({ role: "assistant" }), piece: chunk({ content: filler }), tail: chunk({}, "stop") + "data: [DONE]\n\n" }
    case "endless line":
      return { head: `data: {"choices":[{"index":0,"delta":{"content":"`, piece: filler, tail: "\"}}]}\n\n" + chunk({}, "stop") + "data: [DONE]\n\n" }
  }
}

const plainReply = chunk({ role: "assistant", content: "A short answer." }) + chunk({}, "stop") + "data: [DONE]\n\n"

interface FakeServer {
  readonly url: string
  /** Bytes of the hostile answer written before the client went away (or all of it). */
  readonly sent: () => number
  readonly requests: () => number
  readonly close: () => Promise<void>
}

const startServer = async (shape: Shape): Promise<FakeServer> => {
  let sent = 0
  let requests = 0
  const server: Server = createServer((request, response) => {
    requests += 1
    request.resume()
    response.writeHead(200, { "content-type": "text/event-stream" })
    if (shape === "plain" || requests > 1) {
      response.end(plainReply)
      return
    }
    const { head, piece, tail } = hostile(shape)
    let closed = false
    response.on("close", () => (closed = true))
    response.write(head)
    const pump = () => {
      while (!closed && sent < TOTAL_BYTES) {
        sent += piece.length
        if (!response.write(piece)) {
          response.once("drain", pump)
          return
        }
      }
      if (!closed) response.end(tail)
    }
    pump()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    sent: () => sent,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

interface Run {
  readonly shape: Shape
  readonly code: number | null
  readonly peakRssMiB: number
  readonly wallMs: number
  readonly sentMiB: number
  readonly requests: number
  readonly status: string
  readonly textChars: number
  readonly reportBytes: number
}

const runShape = async (shape: Shape): Promise<Run> => {
  const server = await startServer(shape)
  const rssDir = mkdtempSync(join(tmpdir(), "loopcord-rss-"))
  const preload = pathToFileURL(join(here, "support", "reportPeakRss.mjs")).href
  const startedAt = Date.now()
  const outcome = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [join(root, "dist/main.js"), "--once", "hi", "--json"], {
      cwd: root,
      env: {
        PATH: process.env["PATH"] ?? "",
        HOME: process.env["HOME"] ?? root,
        NODE_OPTIONS: `--import=${preload}`,
        LOOPCORD_BENCH_RSS_DIR: rssDir,
        DATABASE_URL: "sqlite::memory:",
        LLM_PROVIDER: "openai-compatible",
        LLM_BASE_URL: server.url,
        LLM_API_KEYS: "bench-key",
        LLM_MODELS: "bench-model",
        LOG_LEVEL: "warn",
        // The loopback fake is the only search backend there is.
        SEARXNG_BASE_URL: server.url,
        DUCKDUCKGO_BASE_URL: server.url
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (piece: Buffer) => stdout.push(piece))
    child.stderr.on("data", (piece: Buffer) => stderr.push(piece))
    const timer = setTimeout(() => child.kill("SIGKILL"), 600_000)
    child.once("error", reject)
    child.once("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8") })
    })
  })
  const wallMs = Date.now() - startedAt
  await server.close()
  const peaks = readdirSync(rssDir).map((file) => Number(readFileSync(join(rssDir, file), "utf8").split(" ")[0]))
  rmSync(rssDir, { recursive: true, force: true })
  const line = outcome.stdout.trim()
  let status = "no report"
  let textChars = 0
  try {
    const report = JSON.parse(line) as { readonly status: string; readonly text: string }
    status = report.status
    textChars = report.text.length
  } catch {
    process.stderr.write(`  ${shape}: no JSON report (exit ${outcome.code}): ${outcome.stderr.slice(-1500)}\n`)
  }
  return {
    shape,
    code: outcome.code,
    peakRssMiB: peaks.length === 0 ? Number.NaN : Math.max(...peaks) / 1024,
    wallMs,
    sentMiB: shape === "plain" ? 0 : server.sent() / 1024 / 1024,
    requests: server.requests(),
    status,
    textChars,
    reportBytes: Buffer.byteLength(line)
  }
}

const main = async () => {
  execFileSync(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: ["ignore", 2, 2] })
  const load = loadLine()
  const shapes: ReadonlyArray<Shape> = ["plain", "arguments", "reasoning", "text", "endless line"]
  const runs: Array<Run> = []
  for (const shape of shapes) {
    process.stderr.write(`  hostile: ${shape}\n`)
    runs.push(await runShape(shape))
  }
  const plain = runs[0]!
  check(plain.status === "completed", `the plain turn completed (${plain.status})`)
  const lines = [
    "## Hostile provider streams, peak RSS of `--once --json` against the 200 MB target",
    "",
    `A loopback OpenAI-compatible server answers the first request with ${fmt(TOTAL_BYTES / 1024 / 1024, 0)} MiB in one shape (16 KiB deltas, as fast as the socket drains) and later requests with a short reply; each run is a fresh \`node dist/main.js --once hi --json\` (default caps). Peak RSS is getrusage maxrss of the process. "sent" is how much of the hostile answer the server wrote before the process hung up.`,
    "",
    load,
    "",
    "| shape | peak RSS MiB | vs 200 MB target | vs plain turn | sent MiB | requests | wall s | report status | reply chars | report bytes |",
    "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"
  ]
  for (const run of runs) {
    lines.push(
      `| ${run.shape} | ${fmt(run.peakRssMiB, 1)} | ${fmt(run.peakRssMiB / (TARGET_MIB / 1.048576), 2)} | ${fmt(run.peakRssMiB / plain.peakRssMiB, 2)} | ${run.shape === "plain" ? "-" : fmt(run.sentMiB, 1)} | ${run.requests} | ${fmt(run.wallMs / 1000, 1)} | ${run.status} | ${run.textChars} | ${run.reportBytes} |`
    )
  }
  const worst = Math.max(...runs.map((run) => run.peakRssMiB))
  lines.push("", `Worst hostile shape: ${fmt(worst, 1)} MiB = ${fmt(worst * 1.048576, 1)} MB (target ≤ ${TARGET_MIB} MB).`)
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`)
  process.exit(1)
})
