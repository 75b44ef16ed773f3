/**
 * Tool-loop overhead, side by side (tracker issue 8, items 1 and 2): loopcord vs the Vercel AI
 * SDK vs a hand-written loop (the floor), against one loopback OpenAI-compatible server in its
 * own process, shared by all three.
 *
 * 1. Per-step overhead = the server's last byte of step k → the first byte (request headers
 *    parsed) of request k+1 of the same turn, both stamped on the server. Turns of 1, 5 and 20
 *    zero-cost `echo` steps, 1 and 200 concurrent turns.
 * 2. Time-to-first-delta overhead = the server's write of the first text delta → the consumer
 *    receiving it (server TTFT is 0; both stamps are CLOCK_MONOTONIC, comparable across processes).
 *
 * Every turn's final text must equal the text the server derives from the tool results it was
 * sent back, and every turn must make exactly steps+1 model calls, before any timing counts.
 * Equal caps (21 model calls), retries off, logs off. Contenders alternate order per round.
 * `BENCH_QUICK=1` runs a smaller sweep (a smoke test of the harness).
 */
import { makeAiSdk } from "./support/aiSdkContender"
import type { Contender } from "./support/contender"
import { makeHandLoop } from "./support/handLoopContender"
import { makeLoopcord } from "./support/loopcordContender"
import { expectedLoopText, type Records, TTFT_TEXT } from "./support/loopServer"
import { type FinishedTurn, runTurns, turnIds } from "./support/runTurns"
import { spawnLoopServer } from "./support/serverProcess"
import { check, fmt, loadLine, ms, percentile, ratio, settleHeap } from "./support/stats"

const quick = process.env.BENCH_QUICK === "1"
const CAP = 21
const stepCounts = [1, 5, 20] as const
const concurrencies = [1, 200] as const
const rounds = quick ? 1 : 2

interface Batch {
  /** Per-step gaps, ns. */
  readonly gaps: Array<number>
  /** Client CPU per model call, ms. */
  readonly cpuPerCall: Array<number>
  readonly connections: number
  readonly turns: number
}

/** Turns per batch: about 150 gaps per round when sequential, one burst of 200 when concurrent. */
const turnsFor = (steps: number, concurrency: number) =>
  concurrency > 1 ? concurrency : quick ? 5 : Math.max(10, Math.ceil(150 / steps))

const gapsOf = (records: Records, turns: ReadonlyArray<FinishedTurn>, steps: number): Array<number> => {
  const gaps: Array<number> = []
  for (const turn of turns) {
    const requests = records.turns[turn.id] ?? []
    check(requests.length === steps + 1, `turn ${turn.id} made ${requests.length} model calls, expected ${steps + 1}`)
    for (let k = 0; k < steps; k += 1) {
      const lastByte = requests[k]!.lastByte
      check(lastByte !== undefined, `turn ${turn.id} step ${k} has no last-byte stamp`)
      gaps.push(requests[k + 1]!.arrived - lastByte!)
    }
  }
  return gaps
}

const main = async () => {
  const load = loadLine()
  const server = await spawnLoopServer()
  const options = { baseUrl: server.baseUrl, toolUrl: server.toolUrl, tools: ["echo"] as const, maxSteps: CAP }
  const contenders: Array<Contender> = [await makeLoopcord(options), await makeAiSdk(options), await makeHandLoop(options)]

  const runLoop = async (contender: Contender, steps: number, concurrency: number) => {
    const ids = turnIds(`${contender.name.replace(/[^a-z]/gi, "")}s${steps}c${concurrency}t`, turnsFor(steps, concurrency))
    await server.records({ clear: true })
    await settleHeap()
    const cpu = process.cpuUsage()
    const turns = await runTurns(contender, ids.map((id) => ({ id, message: `turn:${id}:loop:${steps}` })), concurrency)
    const used = process.cpuUsage(cpu)
    for (const turn of turns) {
      check(turn.outcome.status === "completed", `${contender.name}: turn ${turn.id} ended ${turn.outcome.status}`)
      check(turn.outcome.text === expectedLoopText(turn.id, steps), `${contender.name}: turn ${turn.id} text ${JSON.stringify(turn.outcome.text)}`)
    }
    const records = await server.records({ clear: true })
    return {
      gaps: gapsOf(records, turns, steps),
      cpuPerCall: [(used.user + used.system) / 1000 / (turns.length * (steps + 1))],
      connections: records.connections,
      turns: turns.length
    } satisfies Batch
  }

  const runTtft = async (contender: Contender, concurrency: number) => {
    const ids = turnIds(`${contender.name.replace(/[^a-z]/gi, "")}ttft${concurrency}t`, concurrency > 1 ? concurrency : quick ? 10 : 100)
    await server.records({ clear: true })
    await settleHeap()
    const turns = await runTurns(contender, ids.map((id) => ({ id, message: `turn:${id}:ttft` })), concurrency)
    const records = await server.records({ clear: true })
    return turns.map((turn) => {
      check(turn.outcome.text === TTFT_TEXT, `${contender.name}: ttft turn ${turn.id} text ${JSON.stringify(turn.outcome.text)}`)
      const written = records.turns[turn.id]?.[0]?.firstWrite
      check(written !== undefined && turn.firstDeltaAt !== undefined, `${contender.name}: ttft turn ${turn.id} has no stamps`)
      return turn.firstDeltaAt! - written!
    })
  }

  // Warm-up: JIT (a few hundred steps), connection pools, module caches.
  for (const contender of contenders) {
    for (let round = 0; round < (quick ? 1 : 4); round += 1) await runLoop(contender, 5, 10)
    await runLoop(contender, 5, 50)
    await runTtft(contender, 10)
  }

  const loops = new Map<string, Batch>()
  const key = (name: string, steps: number, concurrency: number) => `${name}/${steps}/${concurrency}`
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse()
    for (const steps of stepCounts) {
      for (const concurrency of concurrencies) {
        for (const contender of order) {
          process.stderr.write(`  loop: ${contender.name} ${steps} steps × ${concurrency} concurrent (round ${round + 1})\n`)
          const batch = await runLoop(contender, steps, concurrency)
          const id = key(contender.name, steps, concurrency)
          const previous = loops.get(id)
          loops.set(id, previous === undefined ? batch : {
            gaps: [...previous.gaps, ...batch.gaps],
            cpuPerCall: [...previous.cpuPerCall, ...batch.cpuPerCall],
            connections: previous.connections + batch.connections,
            turns: previous.turns + batch.turns
          })
        }
      }
    }
  }
  const ttft = new Map<string, Array<number>>()
  for (let round = 0; round < rounds; round += 1) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse()
    for (const concurrency of concurrencies) {
      for (const contender of order) {
        const id = `${contender.name}/${concurrency}`
        ttft.set(id, [...(ttft.get(id) ?? []), ...(await runTtft(contender, concurrency))])
      }
    }
  }
  for (const contender of contenders) await contender.close()
  await server.stop()

  const [us, sdk, floor] = contenders.map((c) => c.name) as [string, string, string]
  const p = (name: string, steps: number, concurrency: number, q: number) => ms(percentile(loops.get(key(name, steps, concurrency))!.gaps, q))
  const cpu = (name: string, steps: number, concurrency: number) => percentile(loops.get(key(name, steps, concurrency))!.cpuPerCall, 50)
  const conns = (name: string, steps: number, concurrency: number) => {
    const batch = loops.get(key(name, steps, concurrency))!
    return batch.connections / batch.turns
  }
  const lines = [
    "## Tool-loop overhead per step (server-measured), loopcord vs AI SDK vs hand-written floor",
    "",
    `One loopback OpenAI-compatible server in its own process, shared by all contenders; zero-cost \`echo\` tool; equal caps (${CAP} model calls), retries off, logs off; identical final text (derived by the server from the tool results it got back) checked for every turn before timing counts. Gap = server's last byte of step k → arrival of request k+1 (headers parsed), milliseconds. Sequential runs: ${quick ? "5" : "max(10, 150/steps)"} turns per round; concurrent: 200 turns started at once. ${rounds} round(s), contenders alternating. Client CPU = bench-process CPU per model call (median over rounds). Connections = TCP connections the server accepted per turn.`,
    "",
    loadLine(),
    `(Load when the run started: ${load.replace(/^Machine: /, "")})`,
    "",
    `| steps | concurrent | ${us} p50 / p99 | ${sdk} p50 / p99 | ${floor} p50 / p99 | p99 ${us}/${sdk} | p99 ${us}/floor | client CPU ms per call (${us} / ${sdk} / floor) | connections per turn (${us} / ${sdk} / floor) |`,
    "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  ]
  let meetsSdk = true
  let meetsFloor = true
  for (const steps of stepCounts) {
    for (const concurrency of concurrencies) {
      const cell = (name: string) => `${fmt(p(name, steps, concurrency, 50))} / ${fmt(p(name, steps, concurrency, 99))}`
      const vsSdk = p(us, steps, concurrency, 99) / p(sdk, steps, concurrency, 99)
      const vsFloor = p(us, steps, concurrency, 99) / p(floor, steps, concurrency, 99)
      meetsSdk &&= vsSdk <= 0.5
      meetsFloor &&= vsFloor <= 1.5
      lines.push(
        `| ${steps} | ${concurrency} | ${cell(us)} | ${cell(sdk)} | ${cell(floor)} | ${ratio(p(us, steps, concurrency, 99), p(sdk, steps, concurrency, 99))} | ${ratio(p(us, steps, concurrency, 99), p(floor, steps, concurrency, 99))} | ${[us, sdk, floor].map((n) => fmt(cpu(n, steps, concurrency), 3)).join(" / ")} | ${[us, sdk, floor].map((n) => fmt(conns(n, steps, concurrency), 2)).join(" / ")} |`
      )
    }
  }
  lines.push(
    "",
    `Targets (p99 per-step overhead ≤ 0.5× the AI SDK's and ≤ 1.5× the floor's, in every row): vs AI SDK ${meetsSdk ? "met" : "NOT met"}; vs floor ${meetsFloor ? "met" : "NOT met"}.`,
    "",
    "### Time-to-first-delta overhead (server's first delta write → consumer receives it), milliseconds",
    "",
    `| concurrent | ${us} p50 / p99 | ${sdk} p50 / p99 | ${floor} p50 / p99 | p50 ${us}/${sdk} | p99 ${us}/${sdk} |`,
    "|---:|---:|---:|---:|---:|---:|"
  )
  for (const concurrency of concurrencies) {
    const q = (name: string, at: number) => ms(percentile(ttft.get(`${name}/${concurrency}`)!, at))
    lines.push(
      `| ${concurrency} | ${fmt(q(us, 50))} / ${fmt(q(us, 99))} | ${fmt(q(sdk, 50))} / ${fmt(q(sdk, 99))} | ${fmt(q(floor, 50))} / ${fmt(q(floor, 99))} | ${ratio(q(us, 50), q(sdk, 50))} | ${ratio(q(us, 99), q(sdk, 99))} |`
    )
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
