/**
 * One side of the spike's bench in a fresh process: `v3` (the project's own code from src/, on
 * Effect 3) or `v4` (the port, on Effect 4). The method is test/bench/support/allocationWorker.ts's:
 * after a warm-up, sequential `loop:<steps>` turns against the shared loopback server, twice.
 *
 * 1. Allocation: V8's sampling heap profiler (objects later collected by minor and major GCs
 *    included) over one batch; the sampled sizes summed, divided by the model calls made.
 * 2. Per-step time, GC pauses and CPU: a second, unprofiled batch. A step's time is the server's
 *    gap from the last byte of model call k to the arrival of call k+1 (the tool run, the
 *    replay and the next request, all client-side); GC pauses from a `gc` PerformanceObserver.
 *
 * Every turn's final text is checked against the server's expected text before any number counts.
 * This file imports no Effect: each side loads its own major.
 *
 *   node --expose-gc --import tsx spike/effect4/harness/worker.ts <v3|v4> <baseUrl> <toolUrl> <steps> <turns>
 */
import { request } from "node:http"
import { Session } from "node:inspector"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import type { Contender, ContenderOptions } from "../../../test/bench/support/contender"
import { expectedLoopText, type Records } from "../../../test/bench/support/loopServer"
import { runTurns, turnIds } from "../../../test/bench/support/runTurns"
import { check, percentile, settleHeap } from "../../../test/bench/support/stats"

export interface SpikeSample {
  readonly side: string
  readonly effectVersion: string
  readonly modelCalls: number
  readonly bytesPerCall: number
  /** Sampled self size by innermost frame of the side's own code (none: the runtime or a library). */
  readonly byOwnFrame: ReadonlyArray<{ readonly site: string; readonly bytesPerCall: number }>
  readonly topSites: ReadonlyArray<{ readonly site: string; readonly bytesPerCall: number }>
  /** Sampled self size by where the allocating function lives: effect, undici, the side's own code, Node/V8 built-ins. */
  readonly byPlace: ReadonlyArray<{ readonly site: string; readonly bytesPerCall: number }>
  readonly steps: number
  readonly stepP50Ms: number
  readonly stepP99Ms: number
  readonly minorGcPer1000Steps: number
  readonly majorGcPer1000Steps: number
  readonly gcPauseMsPer1000Steps: number
  readonly cpuMsPerCall: number
}

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<ProfileNode>
}

const [side = "v4", baseUrl = "", toolUrl = "", stepText = "5", turnText = "100"] = process.argv.slice(2)
const steps = Number(stepText)
const turns = Number(turnText)

const post = <A>(session: Session, method: string, params: Record<string, unknown> = {}) =>
  new Promise<A>((resolve, reject) => session.post(method, params, (error, result) => (error === null ? resolve(result as A) : reject(error))))

/** The server's records (node:http, so neither side loads another client for the control calls). */
const records = (clear: boolean) =>
  new Promise<Records>((resolve, reject) => {
    const url = `${baseUrl.replace(/\/v1$/, "")}/__records${clear ? "?clear=1" : ""}`
    request(url, (response) => {
      const pieces: Array<Buffer> = []
      response.on("data", (piece: Buffer) => pieces.push(piece))
      response.on("end", () => resolve(JSON.parse(Buffer.concat(pieces).toString("utf8")) as Records))
      response.on("error", reject)
    }).on("error", reject).end()
  })

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))

/** The side's own code: the port (v4/src, v4/contender.ts) or the project (src/, v3/contender.ts). */
const ownFrame = (url: string): boolean => {
  const path = url.replace(/^file:\/\//, "")
  if (path.includes("/node_modules/")) return false
  return side === "v4" ? path.includes("/spike/effect4/v4/") : path.startsWith(`${repoRoot}src/`) || path.includes("/spike/effect4/v3/")
}

/** Where an allocating function lives. */
const placeOf = (url: string): string => {
  if (url.includes("/node_modules/effect/")) return "effect"
  if (url.includes("/node_modules/undici/")) return "undici"
  if (url.includes("/node_modules/")) return "other packages"
  if (ownFrame(url)) return "own code"
  if (url === "" || url.startsWith("node:")) return "Node and V8 built-ins"
  return "other"
}

const siteOf = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url.replace(/^file:\/\//, "").replace(/^.*\/node_modules\//, "").replace(/^.*\/spike\/effect4\//, "spike/").replace(/^(?!spike\/).*\/(src|test)\//, "$1/")
  return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`
}

const main = async () => {
  const loaded = (await import(side === "v3" ? "../v3/contender" : "../v4/contender")) as {
    readonly makeContender: (options: ContenderOptions) => Promise<Contender>
    readonly effectVersion: string
  }
  const contender = await loaded.makeContender({ baseUrl, toolUrl, tools: ["echo"], maxSteps: Math.max(21, steps + 1) })
  const batch = async (tag: string) => {
    const ids = turnIds(`${side}${tag}`, turns)
    const finished = await runTurns(contender, ids.map((id) => ({ id, message: `turn:${id}:loop:${steps}` })), 1)
    for (const turn of finished) {
      check(turn.outcome.text === expectedLoopText(turn.id, steps), `${side}: turn ${turn.id} (${turn.outcome.status}) text ${JSON.stringify(turn.outcome.text)}`)
    }
    return finished.length * (steps + 1)
  }
  // Warm-up: JIT, connection pool, module caches.
  for (let round = 0; round < 3; round += 1) await batch("w")

  // 1. Allocation, sampled.
  const session = new Session()
  session.connect()
  await post(session, "HeapProfiler.enable")
  await settleHeap()
  await post(session, "HeapProfiler.startSampling", {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true
  })
  const modelCalls = await batch("a")
  const { profile } = await post<{ profile: { head: ProfileNode } }>(session, "HeapProfiler.stopSampling")
  session.disconnect()
  const bySite = new Map<string, number>()
  const byOwn = new Map<string, number>()
  const byPlace = new Map<string, number>()
  let total = 0
  const walk = (node: ProfileNode, own: string) => {
    const frame = ownFrame(node.callFrame.url) ? siteOf(node) : own
    total += node.selfSize
    if (node.selfSize > 0) {
      bySite.set(siteOf(node), (bySite.get(siteOf(node)) ?? 0) + node.selfSize)
      byOwn.set(frame, (byOwn.get(frame) ?? 0) + node.selfSize)
      const place = placeOf(node.callFrame.url)
      byPlace.set(place, (byPlace.get(place) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, frame)
  }
  walk(profile.head, "(no own frame)")
  const top = (sizes: Map<string, number>) =>
    [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([site, bytes]) => ({ site, bytesPerCall: bytes / modelCalls }))

  // 2. Per-step time, GC pauses and CPU, unprofiled.
  await settleHeap()
  await records(true)
  const pauses: Array<{ readonly kind: number; readonly ms: number }> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      pauses.push({ kind: ((entry as { detail?: { kind?: number } }).detail?.kind) ?? 0, ms: entry.duration })
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  const cpuBefore = process.cpuUsage()
  const gcCalls = await batch("g")
  const cpu = process.cpuUsage(cpuBefore)
  await new Promise((resolve) => setImmediate(resolve))
  observer.disconnect()
  const stamps = await records(true)
  const gaps: Array<number> = []
  for (const turn of Object.values(stamps.turns)) {
    for (let k = 0; k + 1 < turn.length; k += 1) {
      const last = turn[k]!.lastByte
      if (last !== undefined) gaps.push((turn[k + 1]!.arrived - last) / 1e6)
    }
  }
  check(gaps.length === turns * steps, `${side}: ${gaps.length} step gaps recorded, ${turns * steps} expected`)
  const gcSteps = (gcCalls / (steps + 1)) * steps
  const per1000 = (count: number) => (count / gcSteps) * 1000
  const sample: SpikeSample = {
    side,
    effectVersion: loaded.effectVersion,
    modelCalls,
    bytesPerCall: total / modelCalls,
    byOwnFrame: top(byOwn),
    topSites: top(bySite),
    byPlace: top(byPlace),
    steps: gcSteps,
    stepP50Ms: percentile(gaps, 50),
    stepP99Ms: percentile(gaps, 99),
    minorGcPer1000Steps: per1000(pauses.filter((pause) => pause.kind === constants.NODE_PERFORMANCE_GC_MINOR).length),
    majorGcPer1000Steps: per1000(pauses.filter((pause) => pause.kind === constants.NODE_PERFORMANCE_GC_MAJOR).length),
    gcPauseMsPer1000Steps: per1000(pauses.reduce((sum, pause) => sum + pause.ms, 0)),
    cpuMsPerCall: (cpu.user + cpu.system) / 1000 / gcCalls
  }
  await contender.close()
  process.stdout.write(`${JSON.stringify(sample)}\n`)
  process.exit(0)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
