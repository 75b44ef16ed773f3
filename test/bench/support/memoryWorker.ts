/**
 * One contender in a fresh process, for loopMemory.bench.ts: after a warm-up, for each level N
 * it collects garbage, samples `process.memoryUsage()`, starts N turns that park mid-stream
 * (one tool round done, first delta of the answer received, the server holds the rest), waits
 * until the server holds all N, collects garbage again and samples; then releases them and
 * checks every final text. Prints one JSON line: per level, the heap and RSS deltas.
 *
 *   node --expose-gc --import tsx memoryWorker.ts <loopcord|aisdk|hand> <baseUrl> <toolUrl> <levels,comma> <repetitions>
 */
import type { Contender } from "./contender"
import { loadContender } from "./loadContender"
import { finalText } from "./loopServer"
import { runTurns, turnIds } from "./runTurns"
import { connectLoopServer } from "./serverProcess"
import { check, settleHeap, sleep } from "./stats"

export interface MemorySample {
  readonly level: number
  /** Bytes per in-flight turn, one value per repetition. */
  readonly heapPerTurn: ReadonlyArray<number>
  readonly rssPerTurn: ReadonlyArray<number>
  readonly baselineHeap: number
  readonly baselineRss: number
}

const [which = "loopcord", baseUrl = "", toolUrl = "", levelList = "1,50,200", repetitionText = "3"] = process.argv.slice(2)
const server = connectLoopServer(baseUrl, toolUrl)
const parked = () => server.parked()
const release = () => server.release()

const main = async () => {
  const options = { baseUrl, toolUrl, tools: ["echo"] as const, maxSteps: 21 }
  // Only the contender measured is loaded, so the baseline heap is its own.
  const contender: Contender = await loadContender(which, options)

  const parkTurns = async (count: number, sample?: () => Promise<void>) => {
    const ids = turnIds(`${which}m`, count)
    const handles = ids.map((id) => ({ id, handle: contender.start(`turn:${id}:park`) }))
    const deadline = Date.now() + 60_000
    while ((await parked()) < count) {
      check(Date.now() < deadline, `${which}: only ${await parked()} of ${count} turns parked after 60 s`)
      await sleep(10)
    }
    // Every client has the first delta of its answer once its own text shows it.
    while (handles.some(({ handle }) => handle.firstDeltaAt() === undefined)) await sleep(5)
    if (sample !== undefined) await sample()
    await release()
    for (const { id, handle } of handles) {
      const outcome = await handle.done
      check(outcome.text === finalText(id, [`${id}#0`]), `${which}: parked turn ${id} ended with ${JSON.stringify(outcome.text)}`)
    }
  }

  // Warm-up: every code path of a parked turn, at a few levels, so the JIT and the pools are done.
  await runTurns(contender, turnIds(`${which}w`, 40).map((id) => ({ id, message: `turn:${id}:loop:1` })), 10)
  for (const level of [1, 20, 50]) await parkTurns(level)

  const samples: Array<MemorySample> = []
  for (const level of levelList.split(",").map(Number)) {
    const heapPerTurn: Array<number> = []
    const rssPerTurn: Array<number> = []
    let baselineHeap = 0
    let baselineRss = 0
    for (let repetition = 0; repetition < Number(repetitionText); repetition += 1) {
      await settleHeap()
      const before = process.memoryUsage()
      baselineHeap = before.heapUsed
      baselineRss = before.rss
      await parkTurns(level, async () => {
        await settleHeap()
        const during = process.memoryUsage()
        heapPerTurn.push((during.heapUsed - before.heapUsed) / level)
        rssPerTurn.push((during.rss - before.rss) / level)
      })
    }
    samples.push({ level, heapPerTurn, rssPerTurn, baselineHeap, baselineRss })
  }
  await contender.close()
  process.stdout.write(`${JSON.stringify(samples)}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
