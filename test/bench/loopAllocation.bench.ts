/**
 * Allocation per model call and GC pauses per 1000 steps (issue 16, item 3): loopcord vs the
 * AI SDK vs the hand-written floor, each in a fresh process (allocationWorker.ts) against one
 * loopback server, sequential turns of 5 zero-cost `echo` steps after a warm-up. Allocation is
 * every byte allocated (V8's sampling heap profiler, collected objects included), divided by
 * the model calls made; GC pauses come from an unprofiled second run. The heaviest allocation
 * sites of loopcord are listed, so the next saving is found in the profile, not guessed.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { AllocationSample } from "./support/allocationWorker"
import { contenderIds } from "./support/loadContender"
import { spawnLoopServer } from "./support/serverProcess"
import { fmt, loadLine, ratio } from "./support/stats"

const here = dirname(fileURLToPath(import.meta.url))
const quick = process.env.BENCH_QUICK === "1"
const STEPS = 5
const TURNS = quick ? 20 : 100

/**
 * The before figures of the before/after line, measured with this bench's worker (allocation)
 * on main just before issue 16 merged (a214dbf), in the same sitting as the branch; GC pause
 * time is the median of two noisy runs on the shared machine.
 */
const BEFORE = { commit: "a214dbf", bytesPerCallKiB: 726, minorGcPer1000Steps: 64, gcPauseMsPer1000Steps: 555 }

const main = async () => {
  const load = loadLine()
  const server = await spawnLoopServer()
  const samples = new Map<string, AllocationSample>()
  for (const contender of contenderIds) {
    process.stderr.write(`  allocation: ${contender.name}\n`)
    const run = spawnSync(
      process.execPath,
      ["--expose-gc", "--import", "tsx", join(here, "support/allocationWorker.ts"), contender.id, server.baseUrl, server.toolUrl, String(STEPS), String(TURNS), "1"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 240_000 }
    )
    if (run.status !== 0) throw new Error(`allocation worker ${contender.id} failed (${run.status ?? run.signal})`)
    samples.set(contender.name, JSON.parse(run.stdout.trim().split("\n").pop()!) as AllocationSample)
  }
  // The same loopcord logging as a deployed bot (info, JSON lines; stderr to /dev/null, so the
  // bench's own output stays readable): what the default logging costs a warm process.
  process.stderr.write("  allocation: loopcord at LOG_LEVEL=info, json\n")
  const logged = spawnSync(
    process.execPath,
    ["--expose-gc", "--import", "tsx", join(here, "support/allocationWorker.ts"), "loopcord-info-json", server.baseUrl, server.toolUrl, String(STEPS), String(TURNS), "1"],
    { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 240_000 }
  )
  if (logged.status !== 0) throw new Error(`allocation worker loopcord-info-json failed (${logged.status ?? logged.signal})`)
  const withLogs = JSON.parse(logged.stdout.trim().split("\n").pop()!) as AllocationSample
  await server.stop()

  const kib = (bytes: number) => bytes / 1024
  const [us, sdk, floor] = contenderIds.map((contender) => samples.get(contender.name)!)
  const lines = [
    "## Allocation per model call and GC pauses, loopcord vs AI SDK vs hand-written floor",
    "",
    `Each contender in a fresh process against one loopback server; ${TURNS} sequential turns of ${STEPS} \`echo\` steps (${TURNS * (STEPS + 1)} model calls) after 3 warm-up rounds. Allocated = V8's sampling heap profiler over the run (1 KiB sampling interval, objects already collected by minor and major GCs included), divided by model calls. GC = a second, unprofiled run with a \`gc\` PerformanceObserver.`,
    "",
    load,
    "",
    "| contender | KiB allocated per model call | minor GCs per 1000 steps | major GCs per 1000 steps | GC pause ms per 1000 steps | GC pause p99 ms |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  for (const contender of contenderIds) {
    const sample = samples.get(contender.name)!
    lines.push(
      `| ${contender.name} | ${fmt(kib(sample.bytesPerCall), 1)} | ${fmt(sample.minorGcPer1000Steps, 1)} | ${fmt(sample.majorGcPer1000Steps, 1)} | ${fmt(sample.gcPauseMsPer1000Steps, 1)} | ${fmt(sample.gcPauseP99Ms)} |`
    )
  }
  lines.push(
    "",
    `loopcord / AI SDK: allocation ${ratio(us!.bytesPerCall, sdk!.bytesPerCall)}, GC pause time ${ratio(us!.gcPauseMsPer1000Steps, sdk!.gcPauseMsPer1000Steps)}; loopcord / floor: allocation ${ratio(us!.bytesPerCall, floor!.bytesPerCall)}.`,
    `Before (commit ${BEFORE.commit}, same worker): ${BEFORE.bytesPerCallKiB} KiB per model call, ${BEFORE.minorGcPer1000Steps} minor GCs and ${BEFORE.gcPauseMsPer1000Steps} ms of GC pause per 1000 steps; now ${fmt(kib(us!.bytesPerCall), 1)} KiB (${ratio(kib(us!.bytesPerCall), BEFORE.bytesPerCallKiB)}×).`,
    `Target (≤ 150 KiB per model call): ${kib(us!.bytesPerCall) <= 150 ? "met" : "NOT met"}.`,
    "",
    `Logging cost in a warm process (issue 16.5): loopcord at its deployed default (LOG_LEVEL=info, json lines) allocates ${fmt(kib(withLogs.bytesPerCall), 1)} KiB per model call against ${fmt(kib(us!.bytesPerCall), 1)} KiB with info records off (${ratio(withLogs.bytesPerCall, us!.bytesPerCall)}×); ${fmt(withLogs.minorGcPer1000Steps, 1)} vs ${fmt(us!.minorGcPer1000Steps, 1)} minor GCs and ${fmt(withLogs.gcPauseMsPer1000Steps, 1)} vs ${fmt(us!.gcPauseMsPer1000Steps, 1)} ms of GC pause per 1000 steps.`,
    "",
    "### Where loopcord allocates (sampled self size per model call, top sites)",
    "",
    "| KiB per call | site |",
    "|---:|---|"
  )
  for (const site of us!.topSites.slice(0, 15)) lines.push(`| ${fmt(kib(site.bytesPerCall), 1)} | \`${site.site}\` |`)
  lines.push(
    "",
    "By the innermost loopcord frame on the allocating stack (allocations with none are the Effect runtime's own: fibers, continuations, channel executors):",
    "",
    "| KiB per call | loopcord frame |",
    "|---:|---|"
  )
  for (const site of us!.bySourceFrame.slice(0, 12)) lines.push(`| ${fmt(kib(site.bytesPerCall), 1)} | \`${site.site}\` |`)
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
