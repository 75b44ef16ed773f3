/**
 * The context budget's cost per pass (tracker issue 23): the same loopcord loop with and without a
 * budget, side by side, against the loopback OpenAI-compatible server the loop benchmarks share
 * (its own process), on turns of 20 `echo` steps over a conversation of 100 history messages.
 *
 * 1. Per-step overhead, server-measured as in loopOverhead.bench.ts: the server's last byte of
 *    step k → the arrival of request k+1. Contenders: no window known (the budget returns each
 *    request at its first check: the loop without a budget), a window the conversation fits (the
 *    budget counts every item each pass and changes nothing), and a tight window (8,192 tokens:
 *    every pass drops the oldest history to fit). Turn text checked against the tool results
 *    the server was sent back before any timing counts.
 * 2. The budget alone, in process: `budgetRequest` over 100 history messages and 20 tool results
 *    of 2,000 characters as a pass of a turn sees them (the history and older results already
 *    seen, the newest result new), and the first pass of a turn (100 messages just loaded, no
 *    result yet), each within and over the limit, microseconds per pass.
 *
 * Target: the budget's cost per pass at most 5 % of the loop's per-step overhead.
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import type { TurnInput } from "../../src/chat/TurnInput"
import { ContextConfig } from "../../src/config/ContextConfig"
import type { ChatMessage } from "../../src/domain/ChatMessage"
import type { ToolHistoryEntry } from "../../src/domain/ToolHistoryEntry"
import { budgetRequest } from "../../src/loop/context/budget"
import { exchangesOf } from "../../src/loop/context/exchanges"
import type { ResponseSink } from "../../src/loop/ResponseSink"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import { ModelWindows } from "../../src/provider/ModelWindows"
import { type Contender, type ContenderOptions, SYSTEM_PROMPT, type TurnOutcome } from "./support/contender"
import { loopcordLayer, makeTextSink, quietLogs } from "./support/loopcordContender"
import { expectedLoopText, type Records } from "./support/loopServer"
import { runTurns, turnIds } from "./support/runTurns"
import { spawnLoopServer } from "./support/serverProcess"
import { check, fmt, loadLine, ms, percentile, ratio, settleHeap } from "./support/stats"

const quick = process.env.BENCH_QUICK === "1"
const STEPS = 20
const HISTORY = 100
const rounds = quick ? 1 : 2

const sentence = (index: number, chars: number) => {
  const words = ["the", "channel", "talked", "about", "deployments", "and", "context", "windows", "for", "hours", "while", "someone", "asked"]
  let text = ""
  for (let at = 0; text.length < chars; at++) text += `${words[(index + at * 5) % words.length]} `
  return text.slice(0, chars)
}

/** 100 earlier channel messages, users and the bot taking turns, 600 characters each. */
const history: ReadonlyArray<ChatMessage> = Array.from({ length: HISTORY }, (_, index) => ({
  role: index % 2 === 0 ? "user" : "assistant",
  content: sentence(index, 600),
  ...(index % 2 === 0 ? { name: `user${index % 7}` } : {}),
  messageId: `${1000 + index}`
}))

const windowsLayer = (tokens: number | undefined): Layer.Layer<never> =>
  tokens === undefined
    ? Layer.empty
    : Layer.succeed(ModelWindows, { windowOf: () => Effect.succeed({ tokens, source: "setting" as const }), learn: () => Effect.void }) as Layer.Layer<never>

const makeContender = async (name: string, options: ContenderOptions, window: number | undefined): Promise<Contender> => {
  const runtime = ManagedRuntime.make(Layer.mergeAll(loopcordLayer(options), quietLogs, windowsLayer(window), ContextConfig.make()))
  const queue = await runtime.runPromise(ChannelQueue)
  let channels = 0
  const input = (channelId: string, message: string, sink: ResponseSink["Service"]): TurnInput => ({
    channelId,
    guildId: "bench-guild",
    userId: "bench-user",
    messageId: `${channelId}-message`,
    isDM: false,
    locale: "en",
    persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: SYSTEM_PROMPT },
    loadContext: Effect.succeed([...history, { role: "user", content: message, messageId: `${channelId}-message` }]),
    shouldSurfaceUserErrors: true,
    openSink: Effect.succeed({ sink })
  })
  return {
    name,
    start: (message) => {
      const channelId = `channel-${++channels}`
      const text = makeTextSink()
      const done = runtime.runPromise(
        Effect.flatMap(queue.submit(input(channelId, message, text.sink)), (ticket) => ticket.result).pipe(
          Effect.map((result): TurnOutcome => ({ text: text.text(), status: result.status })),
          Effect.catch((error) => Effect.succeed<TurnOutcome>({ text: text.text(), status: error._tag }))
        )
      )
      return { done, kill: () => {}, firstDeltaAt: text.firstDeltaAt }
    },
    close: () => runtime.dispose()
  }
}

const gapsOf = (records: Records, ids: ReadonlyArray<string>): Array<number> => {
  const gaps: Array<number> = []
  for (const id of ids) {
    const requests = records.turns[id] ?? []
    check(requests.length === STEPS + 1, `turn ${id} made ${requests.length} model calls, expected ${STEPS + 1}`)
    for (let k = 0; k < STEPS; k++) gaps.push(requests[k + 1]!.arrived - requests[k]!.lastByte!)
  }
  return gaps
}

/** The budget alone: median microseconds per call over `runs` calls of `make()` (a fresh request or the same). */
const timeBudget = (make: () => GenerationRequest, limit: number, runs: number): number => {
  const samples: Array<number> = []
  for (let run = 0; run < runs + 200; run++) {
    const request = make()
    const started = process.hrtime.bigint()
    const outcome = budgetRequest({ request, exchanges: exchangesOf(request.functionHistory), question: request.messages.length - 1, limit, compaction: "elide" })
    const elapsed = Number(process.hrtime.bigint() - started) / 1000
    check(outcome.request.messages.length > 0, "the budget returned a request")
    if (run >= 200) samples.push(elapsed)
  }
  return percentile(samples, 50)
}

const entry = (index: number): ToolHistoryEntry => ({
  functionCall: { name: "echo", args: { text: `step ${index}` }, id: `call_${index}` },
  functionResponse: { name: "echo", response: { result: { echoed: sentence(index, 2_000) } } }
})

const main = async () => {
  const load = loadLine()
  const server = await spawnLoopServer()
  const options: ContenderOptions = { baseUrl: server.baseUrl, toolUrl: server.toolUrl, tools: ["echo"], maxSteps: STEPS + 1 }
  const contenders = [
    { label: "no budget (no window known)", contender: await makeContender("off", options, undefined) },
    { label: "budget, 1M-token window (fits: bounded by characters, nothing changed)", contender: await makeContender("fits", options, 1_000_000) },
    { label: "budget, 8,192-token window (every pass drops old history)", contender: await makeContender("tight", options, 8_192) }
  ]

  const runLoop = async (contender: Contender, concurrency: number) => {
    const ids = turnIds(`${contender.name}c${concurrency}t`, concurrency > 1 ? concurrency : quick ? 3 : 10)
    await server.records({ clear: true })
    await settleHeap()
    const cpu = process.cpuUsage()
    const turns = await runTurns(contender, ids.map((id) => ({ id, message: `turn:${id}:loop:${STEPS}` })), concurrency)
    const used = process.cpuUsage(cpu)
    for (const turn of turns) {
      check(turn.outcome.status === "completed", `${contender.name}: turn ${turn.id} ended ${turn.outcome.status}`)
      check(turn.outcome.text === expectedLoopText(turn.id, STEPS), `${contender.name}: turn ${turn.id} text ${JSON.stringify(turn.outcome.text)}`)
    }
    const records = await server.records({ clear: true })
    return { gaps: gapsOf(records, ids), cpuPerCall: (used.user + used.system) / 1000 / (turns.length * (STEPS + 1)) }
  }

  for (const { contender } of contenders) {
    for (let warm = 0; warm < (quick ? 1 : 3); warm++) await runLoop(contender, 5)
  }
  const concurrencies = [1, 50] as const
  const results = new Map<string, { gaps: Array<number>; cpu: Array<number> }>()
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? contenders : [...contenders].reverse()
    for (const concurrency of concurrencies) {
      for (const { contender } of order) {
        process.stderr.write(`  contextBudget: ${contender.name} × ${concurrency} (round ${round + 1})\n`)
        const batch = await runLoop(contender, concurrency)
        const key = `${contender.name}/${concurrency}`
        const previous = results.get(key) ?? { gaps: [], cpu: [] }
        results.set(key, { gaps: [...previous.gaps, ...batch.gaps], cpu: [...previous.cpu, batch.cpuPerCall] })
      }
    }
  }
  for (const { contender } of contenders) await contender.close()
  await server.stop()

  // The budget alone, in this process.
  const entries = Array.from({ length: 20 }, (_, index) => entry(index))
  const question: ChatMessage = { role: "user", content: "turn:x:loop:20" }
  const warmRequest: GenerationRequest = {
    model: "bench-model",
    apiKey: undefined,
    system: SYSTEM_PROMPT,
    messages: [...history, question],
    tools: [],
    functionHistory: entries
  }
  // A pass of a turn: the history and the older results already seen, the newest result new.
  const nextPass = () => ({ ...warmRequest, functionHistory: [...entries.slice(0, -1), { ...entries[19]!, functionResponse: { ...entries[19]!.functionResponse } }] })
  // The first pass of a turn: a freshly loaded history (new objects), no tool result yet.
  const firstPass = () => ({ ...warmRequest, messages: [...history.map((message) => ({ ...message })), { ...question }], functionHistory: [] })
  const runs = quick ? 500 : 3_000
  const budgetWarmFits = timeBudget(nextPass, 1_000_000, runs)
  const budgetWarmTight = timeBudget(nextPass, 12_000, runs)
  const budgetColdFits = timeBudget(firstPass, 1_000_000, quick ? 200 : 1_000)
  const budgetColdTight = timeBudget(firstPass, 8_000, quick ? 200 : 1_000)

  const p = (name: string, concurrency: number, q: number) => ms(percentile(results.get(`${name}/${concurrency}`)!.gaps, q))
  const cpu = (name: string, concurrency: number) => percentile(results.get(`${name}/${concurrency}`)!.cpu, 50)
  const lines = [
    "## Context budget: cost per pass, the same loop with and without a budget",
    "",
    `loopcord (ChannelQueue → TurnRunner → runGenerationTurn → runToolLoop over the OpenAI-compatible provider) against the shared loopback server in its own process; turns of ${STEPS} \`echo\` steps over ${HISTORY} history messages of 600 characters; final text checked against the tool results the server got back. Gap = the server's last byte of step k → arrival of request k+1, milliseconds (as in loopOverhead). Sequential: ${quick ? 3 : 10} turns per round; concurrent: 50 turns at once; ${rounds} round(s), order alternating. Client CPU = bench-process CPU per model call (median over rounds).`,
    "",
    loadLine(),
    `(Load when the run started: ${load.replace(/^Machine: /, "")})`,
    "",
    "| contender | concurrent | per-step p50 / p99 ms | client CPU ms per call | p50 vs no budget | CPU vs no budget |",
    "|---|---:|---:|---:|---:|---:|"
  ]
  for (const concurrency of concurrencies) {
    for (const { contender, label } of contenders) {
      lines.push(
        `| ${label} | ${concurrency} | ${fmt(p(contender.name, concurrency, 50))} / ${fmt(p(contender.name, concurrency, 99))} | ${fmt(cpu(contender.name, concurrency), 3)} | ${ratio(p(contender.name, concurrency, 50), p("off", concurrency, 50))} | ${ratio(cpu(contender.name, concurrency), cpu("off", concurrency))} |`
      )
    }
  }
  const overheadUs = p("off", 1, 50) * 1000
  const share = (us: number) => `${fmt((us / overheadUs) * 100)} %`
  lines.push(
    "",
    `### The budget alone (\`budgetRequest\`, ${HISTORY} history messages and 20 tool results of 2,000 characters), median µs per pass`,
    "",
    "| case | µs per pass | share of the loop's sequential per-step overhead (no budget, p50) |",
    "|---|---:|---:|",
    `| a pass of a turn (history and older results seen, the newest result new), fits | ${fmt(budgetWarmFits, 1)} | ${share(budgetWarmFits)} |`,
    `| a pass of a turn, over the limit (old results elided, old history dropped) | ${fmt(budgetWarmTight, 1)} | ${share(budgetWarmTight)} |`,
    `| the first pass of a turn (100 messages just loaded), fits: bounded by characters, not counted | ${fmt(budgetColdFits, 1)} | ${share(budgetColdFits)} |`,
    `| the first pass of a turn, over the limit: every message counted once | ${fmt(budgetColdTight, 1)} | ${share(budgetColdTight)} |`,
    "",
    `Target (the budget's cost per pass ≤ 5 % of the per-step overhead, ${fmt(overheadUs, 0)} µs here): ${Math.max(budgetWarmFits, budgetWarmTight) <= overheadUs * 0.05 ? "met" : "NOT met"} for the passes of a turn (the steps); the first pass, before any step, costs ${share(budgetColdFits)} within the window and ${share(budgetColdTight)} over it.`
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
