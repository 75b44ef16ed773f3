/**
 * Memory per in-flight turn (tracker issue 8, item 3): loopcord vs AI SDK vs the hand-written
 * floor, each in a fresh process (memoryWorker.ts) against one shared loopback server. A turn
 * is "in flight" when it has done one echo round and is mid-answer (first delta received, the
 * server holding the rest). Heap and RSS are sampled after full GCs, before and while 1, 50
 * and 200 turns are parked; per turn = delta / N, median of 3 repetitions. Every parked turn's
 * final text is checked after release.
 */
import { spawnSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { contenderIds } from "./support/loadContender"
import type { MemorySample } from "./support/memoryWorker"
import { spawnLoopServer } from "./support/serverProcess"
import { fmt, loadLine, percentile, ratio } from "./support/stats"

const here = dirname(fileURLToPath(import.meta.url))
const quick = process.env.BENCH_QUICK === "1"
const levels = [1, 50, 200]
const repetitions = quick ? 1 : 3
const contenders = contenderIds

const main = async () => {
  const load = loadLine()
  const server = await spawnLoopServer()
  const results = new Map<string, ReadonlyArray<MemorySample>>()
  for (const contender of contenders) {
    process.stderr.write(`  memory: ${contender.name}\n`)
    const run = spawnSync(
      process.execPath,
      ["--expose-gc", "--import", "tsx", join(here, "support/memoryWorker.ts"), contender.id, server.baseUrl, server.toolUrl, levels.join(","), String(repetitions)],
      { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: 240_000 }
    )
    if (run.status !== 0) throw new Error(`memory worker ${contender.id} failed (${run.status ?? run.signal})`)
    results.set(contender.name, JSON.parse(run.stdout.trim().split("\n").pop()!) as ReadonlyArray<MemorySample>)
  }
  await server.stop()

  const kb = (bytes: number) => bytes / 1024
  const at = (name: string, level: number) => results.get(name)!.find((sample) => sample.level === level)!
  const heap = (name: string, level: number) => kb(percentile(at(name, level).heapPerTurn, 50))
  const rss = (name: string, level: number) => kb(percentile(at(name, level).rssPerTurn, 50))
  const lines = [
    "## Memory per in-flight turn, loopcord vs AI SDK vs hand-written floor",
    "",
    `Each contender in a fresh process (\`--expose-gc\`), one shared loopback server. A turn in flight has done one echo round and holds a half-received answer. Heap (\`heapUsed\`) and RSS deltas after full GCs, divided by the number of turns; median of ${repetitions}. KiB per turn. At N = 1 the delta is within GC noise.`,
    "",
    load,
    "",
    "| concurrent turns | loopcord heap | AI SDK heap | floor heap | heap loopcord/AI SDK | loopcord RSS | AI SDK RSS | floor RSS |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const level of levels) {
    lines.push(
      `| ${level} | ${fmt(heap("loopcord", level), 1)} | ${fmt(heap("AI SDK", level), 1)} | ${fmt(heap("hand-written", level), 1)} | ${ratio(heap("loopcord", level), heap("AI SDK", level))} | ${fmt(rss("loopcord", level), 1)} | ${fmt(rss("AI SDK", level), 1)} | ${fmt(rss("hand-written", level), 1)} |`
    )
  }
  const baseline = (name: string) => at(name, 200).baselineHeap / 1024 / 1024
  lines.push(
    "",
    `Heap after warm-up with nothing in flight: loopcord ${fmt(baseline("loopcord"), 1)} MiB, AI SDK ${fmt(baseline("AI SDK"), 1)} MiB, floor ${fmt(baseline("hand-written"), 1)} MiB.`,
    `Target (heap per turn ≤ the AI SDK's at 50 and 200 concurrent turns): ${
      [50, 200].every((level) => heap("loopcord", level) <= heap("AI SDK", level)) ? "met" : "NOT met"
    }.`
  )
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
