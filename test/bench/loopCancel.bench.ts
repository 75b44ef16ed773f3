/**
 * Cancellation and hung tools (tracker issue 8, items 4 and 5): loopcord vs AI SDK vs the
 * hand-written floor, one shared loopback server (model) plus a second loopback server (tool).
 *
 * 4. Kill (loopcord: ChannelQueue.kill = /kill; the others: abort the signal they were given):
 *    (a) mid-answer → the model socket closed, as the model server observes it;
 *    (b) mid-tool (the tool is in an HTTP GET the tool server never answers) → the tool's
 *        socket closed, as the tool server observes it;
 *    (c) → the turn settled (its promise resolved).
 *    After each kill, no further model request of that turn may arrive (checked 150 ms later).
 * 5. A tool that returns a raw Promise that never settles and ignores every signal, with the
 *    per-tool timeout at loopcord's minimum (TOOL_EXECUTION_TIMEOUT_MS = 10 s, via LoopConfig;
 *    AI SDK: `timeout.stepMs` 10 s, its closest setting; floor: a 10 s race): the time from the
 *    tool call reaching the client to the loop's next model request (bounded at 20 s, then
 *    killed), and the handles (`process.getActiveResourcesInfo()`) left afterwards.
 *
 * Kill stamps and server stamps are both CLOCK_MONOTONIC (`process.hrtime`), so they compare
 * across the two processes.
 */
import { spawn } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { makeAiSdk } from "./support/aiSdkContender"
import { type Contender, type ContenderOptions, nowNs, type TurnHandle } from "./support/contender"
import { makeHandLoop } from "./support/handLoopContender"
import type { HangResult } from "./support/hangWorker"
import { contenderIds } from "./support/loadContender"
import { makeLoopcord } from "./support/loopcordContender"
import { CONTINUED_TEXT } from "./support/loopServer"
import { turnIds } from "./support/runTurns"
import { type ServerProcess, spawnLoopServer } from "./support/serverProcess"
import { check, fmt, loadLine, ms, percentile, ratio, sleep, within } from "./support/stats"

const here = dirname(fileURLToPath(import.meta.url))
const quick = process.env.BENCH_QUICK === "1"
const kills = quick ? 5 : 40
const TOOL_TIMEOUT_MS = 10_000
const HANG_BOUND_MS = 20_000

interface KillSample {
  readonly socketClosedMs: number
  readonly settledMs: number
}

const makers = [makeLoopcord, makeAiSdk, makeHandLoop] as const

/** Polls until `ready` holds (the server saw what we wait for), failing after `ms`. */
const until = async (what: string, ready: () => Promise<boolean> | boolean, ms = 10_000) => {
  const deadline = Date.now() + ms
  while (!(await ready())) {
    check(Date.now() < deadline, `timed out waiting for ${what}`)
    await sleep(2)
  }
}

const settleWithin = (handle: TurnHandle, millis: number) =>
  within(handle.done.then((outcome) => ({ outcome, at: nowNs() })), millis)

const killDuringStream = async (server: ServerProcess, contender: Contender, id: string): Promise<KillSample> => {
  const handle = contender.start(`turn:${id}:killstream`)
  await until(`${contender.name} ${id}: first delta`, () => handle.firstDeltaAt() !== undefined)
  await sleep(5)
  const killedAt = nowNs()
  handle.kill()
  const settled = await settleWithin(handle, 5_000)
  check(settled !== undefined, `${contender.name} ${id}: the turn never settled after the kill`)
  check(settled!.outcome.status !== "completed", `${contender.name} ${id}: a killed turn reported completed`)
  await sleep(150)
  const records = await server.records({ clear: true })
  const requests = records.turns[id] ?? []
  check(requests.length === 1, `${contender.name} ${id}: ${requests.length} model requests (a request after the kill)`)
  const closed = requests[0]!.closed
  check(closed !== undefined, `${contender.name} ${id}: the model socket was never closed`)
  return { socketClosedMs: ms(closed! - killedAt), settledMs: ms(settled!.at - killedAt) }
}

const killDuringTool = async (server: ServerProcess, contender: Contender, id: string): Promise<KillSample> => {
  const handle = contender.start(`turn:${id}:killtool`)
  await until(`${contender.name} ${id}: tool request`, async () => (await server.records()).toolCalls[id] !== undefined)
  await sleep(5)
  const killedAt = nowNs()
  handle.kill()
  const settled = await settleWithin(handle, 5_000)
  check(settled !== undefined, `${contender.name} ${id}: the turn never settled after the kill`)
  check(settled!.outcome.status !== "completed", `${contender.name} ${id}: a killed turn reported completed`)
  await sleep(150)
  const records = await server.records({ clear: true })
  check((records.turns[id] ?? []).length === 1, `${contender.name} ${id}: a model request after the kill`)
  const closed = records.toolCalls[id]?.closed
  check(closed !== undefined, `${contender.name} ${id}: the tool's socket was never closed`)
  return { socketClosedMs: ms(closed! - killedAt), settledMs: ms(settled!.at - killedAt) }
}

/** Runs hangWorker.ts for one contender in a fresh process. */
const hangInWorker = (id: string, server: ServerProcess) =>
  new Promise<HangResult>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", join(here, "support/hangWorker.ts"), id, server.baseUrl, server.toolUrl, String(TOOL_TIMEOUT_MS), String(HANG_BOUND_MS)],
      { stdio: ["ignore", "pipe", "inherit"] }
    )
    let output = ""
    child.stdout.on("data", (piece: Buffer) => (output += piece.toString("utf8")))
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`hang worker ${id} exited with ${code}`))
      resolve(JSON.parse(output.trim().split("\n").pop()!) as HangResult)
    })
  })

const main = async () => {
  const load = loadLine()
  const server = await spawnLoopServer()
  const base: ContenderOptions = { baseUrl: server.baseUrl, toolUrl: server.toolUrl, tools: ["echo", "fetch_slow", "never_tool"], maxSteps: 21 }
  const streamKills = new Map<string, Array<KillSample>>()
  const toolKills = new Map<string, Array<KillSample>>()
  const names: Array<string> = []
  for (const make of makers) {
    const contender = await make(base)
    names.push(contender.name)
    process.stderr.write(`  cancel: ${contender.name}\n`)
    const tag = contender.name.replace(/[^a-z]/gi, "")
    // Warm-up: both kill paths a few times.
    for (const id of turnIds(`${tag}kw`, 5)) await killDuringStream(server, contender, id)
    for (const id of turnIds(`${tag}tw`, 5)) await killDuringTool(server, contender, id)
    const streams: Array<KillSample> = []
    const tools: Array<KillSample> = []
    for (const id of turnIds(`${tag}k`, kills)) streams.push(await killDuringStream(server, contender, id))
    for (const id of turnIds(`${tag}t`, kills)) tools.push(await killDuringTool(server, contender, id))
    streamKills.set(contender.name, streams)
    toolKills.set(contender.name, tools)
    await contender.close()
  }

  // Item 5: each contender in its own fresh process (handles are counted per process), all at
  // once: they mostly wait on real time (the 10 s timeout).
  process.stderr.write("  hanging tool: all contenders\n")
  const hangResults = await Promise.all(contenderIds.map((contender) => hangInWorker(contender.id, server)))
  const hangs = new Map(contenderIds.map((contender, index) => [contender.name, hangResults[index]!]))
  await server.stop()

  const [us, sdk, floor] = names as [string, string, string]
  const q = (samples: ReadonlyArray<KillSample>, key: keyof KillSample, at: number) => percentile(samples.map((s) => s[key]), at)
  const lines = [
    "## Cancellation: kill → sockets closed → turn settled, loopcord vs AI SDK vs hand-written floor",
    "",
    `${kills} kills per contender and path, sequential, after a warm-up. Model socket: killed mid-answer (after the first delta). Tool socket: killed while the tool waits on an HTTP GET the tool server never answers. Close times are observed by the servers (another process); milliseconds. Every kill is followed by a check that the turn made no further model request.`,
    "",
    load,
    "",
    "| path | measure | loopcord p50 / p99 | AI SDK p50 / p99 | floor p50 / p99 | p99 loopcord/AI SDK |",
    "|---|---|---:|---:|---:|---:|"
  ]
  for (const [path, data] of [["mid-answer", streamKills], ["mid-tool", toolKills]] as const) {
    for (const [label, key] of [[path === "mid-answer" ? "model socket closed" : "tool socket closed", "socketClosedMs"], ["turn settled", "settledMs"]] as const) {
      const cell = (name: string) => `${fmt(q(data.get(name)!, key, 50))} / ${fmt(q(data.get(name)!, key, 99))}`
      lines.push(`| ${path} | ${label} | ${cell(us)} | ${cell(sdk)} | ${cell(floor)} | ${ratio(q(data.get(us)!, key, 99), q(data.get(sdk)!, key, 99))} |`)
    }
  }
  const socketTarget = q(streamKills.get(us)!, "socketClosedMs", 99) <= 50 && q(toolKills.get(us)!, "socketClosedMs", 99) <= 50
  lines.push(
    "",
    `Target (kill → model and tool socket closed ≤ 50 ms p99): ${socketTarget ? "met" : "NOT met"}. No model request after any kill: checked for every kill of every contender.`,
    "",
    "### A tool that never settles and ignores its signal (timeout 10 s)",
    "",
    `The tool returns a raw Promise that never settles. loopcord: \`TOOL_EXECUTION_TIMEOUT_MS\` at its 10 s minimum (LoopConfig); AI SDK: \`timeout: { stepMs: 10000 }\` (it has no per-tool timeout); floor: a 10 s race. Continued = the tool call reached the client → the loop's next model request (server stamps); bounded at ${HANG_BOUND_MS / 1000} s, after which the turn is killed. Each contender in a fresh process after one warm-up turn; handles = \`process.getActiveResourcesInfo()\` 0.5 s after the turn minus just before it.`,
    "",
    "| contender | loop continued after | final text correct | settled | handles left behind |",
    "|---|---:|---|---|---|"
  )
  for (const name of names) {
    const hang = hangs.get(name)!
    lines.push(
      `| ${name} | ${hang.continuedAfterMs === undefined ? `never (killed after ${HANG_BOUND_MS / 1000} s)` : `${fmt(hang.continuedAfterMs / 1000, 3)} s`} | ${hang.finalText === CONTINUED_TEXT ? "yes" : "no"} | ${hang.settled ? "yes" : "no (pending forever)"} | ${hang.handles} |`
    )
  }
  const ours = hangs.get(us)!
  const hangTarget = ours.continuedAfterMs !== undefined && ours.continuedAfterMs <= TOOL_TIMEOUT_MS + 250 && ours.finalText === CONTINUED_TEXT
  lines.push("", `Target (the ignoring tool never stalls loopcord's loop past its timeout, +250 ms slack): ${hangTarget ? "met" : "NOT met"}.`)
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
