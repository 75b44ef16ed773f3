/**
 * The Effect 4 spike's bench: the same scenario on the project's Effect 3 code (src/) and on the
 * Effect 4 port (v4/src), each in a fresh process (harness/worker.ts), against one loopback
 * OpenAI-compatible server process (test/bench/support/loopServer.ts): sequential turns of 5
 * `echo` steps after a warm-up, final text checked on every turn. Before any number, both sides
 * pass the smoke check of the other endings (harness/smoke.ts). Rounds alternate the sides.
 *
 *   node --import tsx spike/effect4/bench.ts        (SPIKE_RUNS=3, SPIKE_TURNS=100 by default)
 *
 * Prints Markdown: per run, the medians, the ratios v3/v4, and where each side allocates.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { spawnLoopServer } from "../../test/bench/support/serverProcess"
import { fmt, loadLine } from "../../test/bench/support/stats"
import type { SpikeSample } from "./harness/worker"

const here = dirname(fileURLToPath(import.meta.url))
const RUNS = Number(process.env.SPIKE_RUNS ?? 3)
const TURNS = Number(process.env.SPIKE_TURNS ?? 100)
const STEPS = 5
const sides = ["v3", "v4"] as const

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const node = (script: string, args: ReadonlyArray<string>, expose: boolean) =>
  spawnSync(process.execPath, [...(expose ? ["--expose-gc"] : []), "--import", "tsx", join(here, script), ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    timeout: 600_000
  })

const main = async () => {
  const loadBefore = loadLine()
  const server = await spawnLoopServer()
  const lines: Array<string> = []
  try {
    for (const side of sides) {
      const smoke = node("harness/smoke.ts", [side, server.baseUrl, server.toolUrl], false)
      process.stderr.write(smoke.stdout)
      if (smoke.status !== 0) throw new Error(`smoke check of ${side} failed:\n${smoke.stdout}${smoke.stderr}`)
    }
    const samples: Record<(typeof sides)[number], Array<SpikeSample>> = { v3: [], v4: [] }
    for (let run = 0; run < RUNS; run += 1) {
      const order = run % 2 === 0 ? sides : [...sides].reverse()
      for (const side of order) {
        process.stderr.write(`  run ${run + 1}/${RUNS}: ${side}\n`)
        const worker = node("harness/worker.ts", [side, server.baseUrl, server.toolUrl, String(STEPS), String(TURNS)], true)
        if (worker.status !== 0) throw new Error(`worker ${side} failed (${worker.status ?? worker.signal}):\n${worker.stderr}`)
        samples[side].push(JSON.parse(worker.stdout.trim().split("\n").pop()!) as SpikeSample)
      }
    }
    const loadAfter = loadLine()
    const kib = (bytes: number) => bytes / 1024
    const [v3, v4] = [samples.v3, samples.v4]
    const versions = `Effect ${v3[0]!.effectVersion} (src/) vs Effect ${v4[0]!.effectVersion} (spike/effect4/v4)`
    lines.push(
      `## Effect 3 vs Effect 4 on the loop's hot path: ${versions}`,
      "",
      `Each side in a fresh process against one loopback OpenAI-compatible server; ${TURNS} sequential turns of ${STEPS} \`echo\` steps (${TURNS * (STEPS + 1)} model calls) after 3 warm-up rounds, final text checked on every turn; ${RUNS} runs, sides alternating. Allocation: V8's sampling heap profiler (1 KiB interval, collected objects included) over one batch, divided by model calls. Step: the server's gap from the last byte of model call k to the arrival of call k+1, over a second, unprofiled batch, which also gives the GC pauses (a \`gc\` PerformanceObserver) and the client CPU.`,
      "",
      loadBefore,
      `(After the runs: ${loadAfter.replace(/^Machine: /, "")})`,
      "",
      "| run | side | KiB per model call | step p50 ms | step p99 ms | minor GCs per 1000 steps | GC pause ms per 1000 steps | CPU ms per model call |",
      "|---:|---|---:|---:|---:|---:|---:|---:|"
    )
    for (let run = 0; run < RUNS; run += 1) {
      for (const side of sides) {
        const s = samples[side][run]!
        lines.push(`| ${run + 1} | ${side} | ${fmt(kib(s.bytesPerCall), 1)} | ${fmt(s.stepP50Ms)} | ${fmt(s.stepP99Ms)} | ${fmt(s.minorGcPer1000Steps, 1)} | ${fmt(s.gcPauseMsPer1000Steps, 1)} | ${fmt(s.cpuMsPerCall, 3)} |`)
      }
    }
    const med = (side: ReadonlyArray<SpikeSample>, pick: (s: SpikeSample) => number) => median(side.map(pick))
    const metrics: ReadonlyArray<readonly [string, (s: SpikeSample) => number, number]> = [
      ["KiB per model call", (s) => kib(s.bytesPerCall), 1],
      ["step p50 ms", (s) => s.stepP50Ms, 2],
      ["step p99 ms", (s) => s.stepP99Ms, 2],
      ["minor GCs per 1000 steps", (s) => s.minorGcPer1000Steps, 1],
      ["GC pause ms per 1000 steps", (s) => s.gcPauseMsPer1000Steps, 1],
      ["CPU ms per model call", (s) => s.cpuMsPerCall, 3]
    ]
    lines.push("", `Medians of ${RUNS} runs:`, "", "| measure | Effect 3 | Effect 4 | v3 / v4 |", "|---|---:|---:|---:|")
    for (const [name, pick, digits] of metrics) {
      const a = med(v3, pick)
      const b = med(v4, pick)
      lines.push(`| ${name} | ${fmt(a, digits)} | ${fmt(b, digits)} | ${b > 0 ? (a / b).toFixed(2) : "n/a"} |`)
    }
    const fall = med(v3, (s) => s.bytesPerCall) / med(v4, (s) => s.bytesPerCall)
    lines.push("", `Allocation per model call falls ${fall.toFixed(2)}× (the port rule: ≥ 1.5× → port the whole project): ${fall >= 1.5 ? "PORT" : "do not port"}.`)
    lines.push("", "Where the allocating function lives (median of the runs, KiB per model call):", "", "| place | Effect 3 | Effect 4 |", "|---|---:|---:|")
    const places = [...new Set([...v3, ...v4].flatMap((s) => s.byPlace.map((place) => place.site)))]
    const placeKiB = (side: ReadonlyArray<SpikeSample>, place: string) =>
      kib(median(side.map((s) => s.byPlace.find((entry) => entry.site === place)?.bytesPerCall ?? 0)))
    for (const place of places) lines.push(`| ${place} | ${fmt(placeKiB(v3, place), 1)} | ${fmt(placeKiB(v4, place), 1)} |`)
    for (const side of sides) {
      const last = samples[side][RUNS - 1]!
      lines.push(
        "",
        `### ${side === "v3" ? "Effect 3" : "Effect 4"}: where it allocates (last run, KiB per model call)`,
        "",
        "By the innermost frame of the side's own code on the allocating stack (none: the runtime's or a library's own work):",
        "",
        "| KiB | own frame |",
        "|---:|---|"
      )
      for (const site of last.byOwnFrame.slice(0, 10)) lines.push(`| ${fmt(kib(site.bytesPerCall), 1)} | \`${site.site}\` |`)
      lines.push("", "Top allocation sites (self size):", "", "| KiB | site |", "|---:|---|")
      for (const site of last.topSites.slice(0, 10)) lines.push(`| ${fmt(kib(site.bytesPerCall), 1)} | \`${site.site}\` |`)
    }
  } finally {
    await server.stop()
  }
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
