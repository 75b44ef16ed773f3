/**
 * Parallel tool calls in one pass, side by side: loopcord vs the Vercel AI SDK against one
 * loopback OpenAI-compatible server in its own process.
 *
 * Each turn (`turn:<id>:parallel:200`): the first pass streams ONE assistant message with three
 * calls (`slow_a`, `slow_b`, `slow_c`, `tool_calls` indexes 0–2, argument deltas interleaved,
 * finish_reason `tool_calls`); each tool GETs the tool server, which answers after 200 ms; the
 * second pass streams a short text built from the tool results it was sent.
 *
 * - Tool phase = the server's last byte of the first pass → arrival of the second request (both
 *   server stamps). Run concurrently, three 200 ms tools cost one 200 ms tool plus overhead.
 * - Whole turn = the turn started → its promise settled (client, CLOCK_MONOTONIC as the server).
 * - Checked per turn: the three tool requests reached the tool server, the second request carries
 *   the assistant message with the three calls and a result for each (the right `tool_call_id`
 *   with the right payload), the final text is the one the server derived from all three.
 *   A side that fails a check is still timed and reported ("ran 1 of 3 calls"), and the bench
 *   exits non-zero after printing its section.
 *
 * N turns per side, sequential, interleaved (order alternating per pair). `BENCH_QUICK=1` runs
 * a few (a smoke test of the harness).
 */
import { makeAiSdk } from "./support/aiSdkContender"
import { type Contender, type ContenderOptions, nowNs, slowToolNames } from "./support/contender"
import { makeLoopcord } from "./support/loopcordContender"
import { expectedParallelText, type Records } from "./support/loopServer"
import { turnIds } from "./support/runTurns"
import { spawnLoopServer } from "./support/serverProcess"
import { fmt, loadLine, ms, percentile, ratio, within } from "./support/stats"

const quick = process.env.BENCH_QUICK === "1"
const RUNS = quick ? 5 : 40
const WARMUP = quick ? 2 : 6
const SLOW_MS = 200
const CALLS = slowToolNames.length
/** Model calls per turn for both sides: the pass of calls, then the answer. */
const CAP = 2
/** A turn that has not settled by then is killed and counted as a failed check. */
const TURN_BOUND_MS = 10_000
const TARGET = 1.1

interface Sample {
  /** ns; undefined when the turn made no second request. */
  readonly toolPhase: number | undefined
  readonly turn: number
  /** Tool requests that reached the tool server (and were answered), of CALLS. */
  readonly toolsRun: number
  /** Results in the second request that answer one of the calls with its own payload. */
  readonly resultsCarried: number
  /** Calls in the assistant message the second request carried. */
  readonly callsEchoed: number
  /** The tool server's arrival of the first and of the last tool request, after the pass ended (ns). */
  readonly firstToolStart: number | undefined
  readonly lastToolStart: number | undefined
  /** Why the turn fails the checks, when it does. */
  readonly problem: string | undefined
}

/** Everything the server saw of one turn, checked and timed. */
const sampleOf = (id: string, records: Records, outcome: { readonly text: string; readonly status: string } | undefined, turnNs: number): Sample => {
  const requests = records.turns[id] ?? []
  const pass = requests[0]
  const answer = requests[1]
  const calls = pass?.calls ?? []
  const passEnd = pass?.lastByte
  const toolStarts = calls.flatMap((call) => {
    const seen = records.toolCalls[call.fetchId]
    return seen?.answered === undefined || passEnd === undefined ? [] : [seen.arrived - passEnd]
  })
  const results = answer?.results ?? []
  const resultsCarried = calls.filter((call) => results.some((result) => result.toolCallId === call.callId && result.fetched === call.fetchId)).length
  const callsEchoed = (answer?.assistantCallIds ?? []).filter((callId) => calls.some((call) => call.callId === callId)).length
  const problems: Array<string> = []
  if (outcome === undefined) problems.push(`did not settle within ${TURN_BOUND_MS / 1000} s`)
  else if (outcome.status !== "completed") problems.push(`ended ${outcome.status}`)
  if (calls.length !== CALLS) problems.push(`the server asked for ${calls.length} calls`)
  if (toolStarts.length !== CALLS) problems.push(`ran ${toolStarts.length} of ${CALLS} calls`)
  if (answer === undefined) problems.push("made no second request")
  else {
    if (resultsCarried !== CALLS || results.length !== CALLS) {
      problems.push(`its second request carried ${resultsCarried} of ${CALLS} results (${results.length} tool message(s))`)
    }
    if (callsEchoed !== CALLS) problems.push(`its second request's assistant message carried ${callsEchoed} of ${CALLS} calls`)
  }
  if (requests.length > CAP) problems.push(`made ${requests.length} model requests`)
  if (outcome !== undefined && outcome.text !== expectedParallelText(id)) problems.push(`answered ${JSON.stringify(outcome.text)}`)
  return {
    toolPhase: answer !== undefined && passEnd !== undefined ? answer.arrived - passEnd : undefined,
    turn: turnNs,
    toolsRun: toolStarts.length,
    resultsCarried,
    callsEchoed,
    firstToolStart: toolStarts.length > 0 ? Math.min(...toolStarts) : undefined,
    lastToolStart: toolStarts.length > 0 ? Math.max(...toolStarts) : undefined,
    problem: problems.length === 0 ? undefined : problems.join("; ")
  }
}

const main = async () => {
  const load = loadLine()
  const server = await spawnLoopServer()
  const options: ContenderOptions = { baseUrl: server.baseUrl, toolUrl: server.toolUrl, tools: slowToolNames, maxSteps: CAP }
  const contenders: Array<Contender> = [await makeLoopcord(options), await makeAiSdk(options)]

  const runOne = async (contender: Contender): Promise<Sample> => {
    const [id] = turnIds(`${contender.name.replace(/[^a-z]/gi, "")}par`, 1) as [string]
    await server.records({ clear: true })
    const startedAt = nowNs()
    const handle = contender.start(`turn:${id}:parallel:${SLOW_MS}`)
    const outcome = await within(handle.done, TURN_BOUND_MS)
    const settledAt = nowNs()
    if (outcome === undefined) handle.kill()
    return sampleOf(id, await server.records({ clear: true }), outcome, settledAt - startedAt)
  }

  // Warm-up: JIT, connection pools (model and tool server), module caches.
  for (let round = 0; round < WARMUP; round += 1) for (const contender of contenders) await runOne(contender)

  const samples = new Map<string, Array<Sample>>(contenders.map((contender) => [contender.name, []]))
  for (let run = 0; run < RUNS; run += 1) {
    const order = run % 2 === 0 ? contenders : [...contenders].reverse()
    for (const contender of order) samples.get(contender.name)!.push(await runOne(contender))
  }
  for (const contender of contenders) await contender.close()
  await server.stop()

  const [us, sdk] = contenders.map((contender) => contender.name) as [string, string]
  const phases = (name: string) => samples.get(name)!.flatMap((s) => (s.toolPhase === undefined ? [] : [ms(s.toolPhase)]))
  const turns = (name: string) => samples.get(name)!.map((s) => ms(s.turn))
  const starts = (name: string, key: "firstToolStart" | "lastToolStart") =>
    samples.get(name)!.flatMap((s) => (s[key] === undefined ? [] : [ms(s[key]!)]))
  const failures = (name: string) => samples.get(name)!.filter((s) => s.problem !== undefined)
  /** "1 of 3 calls in 40 turns, 3 of 3 calls in 2 turns", the most common count first. */
  const typical = (name: string, key: "toolsRun" | "resultsCarried") => {
    const counts = new Map<number, number>()
    for (const s of samples.get(name)!) counts.set(s[key], (counts.get(s[key]) ?? 0) + 1)
    const unit = key === "toolsRun" ? "calls" : "results"
    return [...counts].sort((a, b) => b[1] - a[1]).map(([value, times]) => `${value} of ${CALLS} ${unit} in ${times} turns`).join(", ")
  }

  const lines = [
    "## Parallel tool calls: one pass of three 200 ms tools, loopcord vs AI SDK",
    "",
    `One loopback OpenAI-compatible server in its own process, shared by both sides. The first pass streams ONE assistant message with ${CALLS} calls (\`${slowToolNames.join("`, `")}\`, \`tool_calls\` indexes 0–${CALLS - 1}, argument deltas interleaved, finish_reason \`tool_calls\`), in one write; each tool is a real loopback HTTP GET the tool server answers after ${SLOW_MS} ms; the second pass streams a short text the server builds from the results it got back. Tool phase = the server's last byte of the first pass → arrival of the second request (server stamps). Whole turn = turn started → settled (client). Tools started = the tool server's arrival of the first / last tool request after the pass ended. ${RUNS} turns per side after ${WARMUP} warm-up turns each, sequential, interleaved (order alternating). Both sides capped at ${CAP} model calls (loopcord: maxIterations; AI SDK: \`stopWhen: stepCountIs(${CAP})\`, \`toolCallConcurrency\` at its default, unlimited), retries off, logs off. Milliseconds.`,
    "",
    loadLine(),
    `(Load when the run started: ${load.replace(/^Machine: /, "")})`,
    "",
    "| side | calls run per turn | results in the 2nd request | turns failing the checks | tool phase p50 / p90 | tool phase / slowest tool (200 ms) p50 / p90 | whole turn p50 / p90 | tools started p50: first / last |",
    "|---|---|---|---:|---:|---:|---:|---:|"
  ]
  for (const name of [us, sdk]) {
    const phase = phases(name)
    const turn = turns(name)
    lines.push(
      `| ${name} | ${typical(name, "toolsRun")} | ${typical(name, "resultsCarried")} | ${failures(name).length} of ${RUNS} | ${fmt(percentile(phase, 50))} / ${fmt(percentile(phase, 90))} | ${ratio(percentile(phase, 50), SLOW_MS)} / ${ratio(percentile(phase, 90), SLOW_MS)} | ${fmt(percentile(turn, 50))} / ${fmt(percentile(turn, 90))} | ${fmt(percentile(starts(name, "firstToolStart"), 50))} / ${fmt(percentile(starts(name, "lastToolStart"), 50))} |`
    )
  }
  lines.push(
    "",
    `${us} / ${sdk}: tool phase ${ratio(percentile(phases(us), 50), percentile(phases(sdk), 50))} (p50), ${ratio(percentile(phases(us), 90), percentile(phases(sdk), 90))} (p90); whole turn ${ratio(percentile(turns(us), 50), percentile(turns(sdk), 50))} (p50), ${ratio(percentile(turns(us), 90), percentile(turns(sdk), 90))} (p90).`,
    ""
  )
  const ourFailures = failures(us)
  const ourRatio = percentile(phases(us), 50) / SLOW_MS
  lines.push(
    ourFailures.length > 0
      ? `Target (${us}'s pass of ${CALLS} slow tools costs ≤ ${TARGET}× the slowest tool, p50): NOT met, not measurable: **${us} ran ${typical(us, "toolsRun")}** (see the checks below); its tool phase above is the time of the calls it ran, not of ${CALLS}.`
      : `Target (${us}'s pass of ${CALLS} slow tools costs ≤ ${TARGET}× the slowest tool, p50): ${ourRatio <= TARGET ? "met" : "NOT met"} (${ourRatio.toFixed(2)}×; p90 ${ratio(percentile(phases(us), 90), SLOW_MS)}×).`
  )
  const failed = [us, sdk].filter((name) => failures(name).length > 0)
  lines.push(
    "",
    failed.length === 0
      ? `Checks: every turn of both sides ran the ${CALLS} calls, sent all ${CALLS} results back with their calls, and got the final text built from them.`
      : `Checks FAILED: ${failed.map((name) => `${name}: ${failures(name)[0]!.problem} (${failures(name).length} of ${RUNS} turns)`).join("; ")}. The bench exits non-zero.`
  )
  process.stdout.write(`${lines.join("\n")}\n`)
  if (failed.length > 0) {
    process.stderr.write(`parallelTools: checks FAILED: ${failed.map((name) => `${name}: ${failures(name)[0]!.problem}`).join("; ")}\n`)
    process.exit(1)
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
