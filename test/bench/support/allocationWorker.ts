/**
 * One contender in a fresh process, for loopAllocation.bench.ts: after a warm-up it runs
 * `loop:<steps>` turns twice against the shared loopback server.
 *
 * 1. Allocation: V8's sampling heap profiler (through `node:inspector`, objects later collected
 *    by minor and major GCs included, so it counts every byte allocated, not what survives)
 *    runs while the turns run; the profile's scaled sizes summed = bytes allocated, divided by
 *    the model calls made. The heaviest allocation sites (self size by function) come along.
 * 2. GC pauses: a second, unprofiled run with a `gc` PerformanceObserver: pauses and their
 *    total duration per 1000 steps, by kind (minor = scavenge, major = mark-compact).
 *
 *   node --expose-gc --import tsx allocationWorker.ts <loopcord|aisdk|hand> <baseUrl> <toolUrl> <steps> <turns> <concurrency>
 *
 * Prints one JSON line (`AllocationSample`).
 */
import { Session } from "node:inspector"
import { constants, PerformanceObserver } from "node:perf_hooks"
import { loadContender } from "./loadContender"
import { expectedLoopText } from "./loopServer"
import { runTurns, turnIds } from "./runTurns"
import { check, settleHeap } from "./stats"

export interface AllocationSite {
  readonly site: string
  readonly bytesPerCall: number
}

export interface AllocationSample {
  readonly modelCalls: number
  readonly bytesPerCall: number
  readonly topSites: ReadonlyArray<AllocationSite>
  /** Bytes by the innermost loopcord (`src/`) frame on the allocating stack (none: runtime or library only). */
  readonly bySourceFrame: ReadonlyArray<AllocationSite>
  readonly steps: number
  readonly minorGcPer1000Steps: number
  readonly majorGcPer1000Steps: number
  readonly gcPauseMsPer1000Steps: number
  readonly gcPauseP99Ms: number
}

interface ProfileNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
  readonly selfSize: number
  readonly children: ReadonlyArray<ProfileNode>
}

const [which = "loopcord", baseUrl = "", toolUrl = "", stepText = "5", turnText = "100", concurrencyText = "1"] = process.argv.slice(2)
const steps = Number(stepText)
const turns = Number(turnText)
const concurrency = Number(concurrencyText)

const post = <A>(session: Session, method: string, params: Record<string, unknown> = {}) =>
  new Promise<A>((resolve, reject) => session.post(method, params, (error, result) => (error === null ? resolve(result as A) : reject(error))))

const siteOf = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame
  const file = url.replace(/^file:\/\//, "").replace(/^.*\/node_modules\//, "").replace(/^.*\/(src|test)\//, "$1/")
  return `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`
}

const main = async () => {
  const options = { baseUrl, toolUrl, tools: ["echo"] as const, maxSteps: Math.max(21, steps + 1) }
  const contender = await loadContender(which, options)
  const batch = async (tag: string) => {
    const ids = turnIds(`${which}${tag}`, turns)
    const finished = await runTurns(contender, ids.map((id) => ({ id, message: `turn:${id}:loop:${steps}` })), concurrency)
    for (const turn of finished) {
      check(turn.outcome.text === expectedLoopText(turn.id, steps), `${which}: turn ${turn.id} text ${JSON.stringify(turn.outcome.text)}`)
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
  const bySource = new Map<string, number>()
  let total = 0
  const walk = (node: ProfileNode, sourceFrame: string) => {
    const own = node.callFrame.url.includes("/src/") ? siteOf(node) : sourceFrame
    total += node.selfSize
    if (node.selfSize > 0) {
      bySite.set(siteOf(node), (bySite.get(siteOf(node)) ?? 0) + node.selfSize)
      bySource.set(own, (bySource.get(own) ?? 0) + node.selfSize)
    }
    for (const child of node.children) walk(child, own)
  }
  walk(profile.head, "(no loopcord frame)")
  const top = (sizes: Map<string, number>) =>
    [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([site, bytes]) => ({ site, bytesPerCall: bytes / modelCalls }))
  const topSites = top(bySite)

  // 2. GC pauses, unprofiled.
  await settleHeap()
  const pauses: Array<{ readonly kind: number; readonly ms: number }> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      pauses.push({ kind: ((entry as { detail?: { kind?: number } }).detail?.kind) ?? 0, ms: entry.duration })
    }
  })
  observer.observe({ entryTypes: ["gc"] })
  const gcCalls = await batch("g")
  await new Promise((resolve) => setImmediate(resolve))
  observer.disconnect()
  const gcSteps = (gcCalls / (steps + 1)) * steps
  const per1000 = (count: number) => (count / gcSteps) * 1000
  const sorted = pauses.map((pause) => pause.ms).sort((a, b) => a - b)
  const sample: AllocationSample = {
    modelCalls,
    bytesPerCall: total / modelCalls,
    topSites,
    bySourceFrame: top(bySource),
    steps: gcSteps,
    minorGcPer1000Steps: per1000(pauses.filter((pause) => pause.kind === constants.NODE_PERFORMANCE_GC_MINOR).length),
    majorGcPer1000Steps: per1000(pauses.filter((pause) => pause.kind === constants.NODE_PERFORMANCE_GC_MAJOR).length),
    gcPauseMsPer1000Steps: per1000(sorted.reduce((sum, ms) => sum + ms, 0)),
    gcPauseP99Ms: sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!
  }
  await contender.close()
  process.stdout.write(`${JSON.stringify(sample)}\n`)
  process.exit(0)
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exit(1)
})
