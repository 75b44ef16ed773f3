/**
 * `npm run soak` (tracker issue 8, item 6): 200 simulated channels × 20 turns each through the
 * real ChannelQueue → TurnRunner → runGenerationTurn → runToolLoop, over the real
 * OpenAI-compatible provider and real loopback HTTP, with random /kills, follow-up messages,
 * tools that time out (one ignores its signal forever), provider 429s, 500s, dropped
 * connections and stalled streams, a fallback model and three API keys.
 *
 * Real time, not virtual: every timeout the soak needs can be shortened through LoopConfig
 * (the 10 s minimums apply to environment variables only), so the whole run takes about a
 * minute of wall time and exercises the sockets, aborts and timers a TestClock run would not.
 * Limits used: tool timeout 1 s, stream inactivity 2 s, first token 4 s, settle 200 ms, 8 model
 * calls per attempt, 3 consecutive tool errors. (Shorter budgets turn the soak into a CPU
 * starvation test: with 200 channels on 2 cores a healthy request can wait ~1 s for the event
 * loop, and sub-second budgets then time out most turns.)
 *
 * Pass criteria, printed as a table; the exit code is 1 if any fails:
 * - zero crashes: no defect inside a turn, no unhandled rejection or exception, no turn failing
 *   with anything but the spec's /kill cancellation of a queued turn;
 * - zero stuck channels: every ticket settles within 60 s per turn it may wait for (a flood's
 *   messages: 1 + CHANNEL_QUEUE_MAX turns), and afterwards no channel has work;
 * - every turn ends with a spec status (TurnStatus) or, if /kill cancelled it while queued,
 *   with TurnCancelledError; every `completed` turn whose plan ended in an answer shows it in full;
 * - the heap after the run (after full GCs) is within 10 % of the heap after the warm-up.
 *
 * Issue 11 adds floods and delivery failures:
 * - floods: now and then a channel gets 13 messages at once (the first starts a reply, the
 *   others arrive while it runs); each flood must cost at most 1 + CHANNEL_QUEUE_MAX model
 *   turns (the rest fold), and its newest message is answered in full when its turn completes;
 * - a delivery phase after the heap sample (test/bench/support/deliverySoak.ts): channels on
 *   the fake Discord, written by a real discord.js client through the real reply sink (bot
 *   messages and persona webhooks), with Discord refusing writes mid-reply (10008, 30046,
 *   10015, 5xx recovered or not, 50013). No `completed` turn may lose or repeat a sentence of
 *   its answer, and a turn whose delivery failed for good ends `error` / `delivery_failed`.
 *
 * `SOAK_SEED=<n>` replays a run; `SOAK_CHANNELS` / `SOAK_TURNS` / `SOAK_DELIVERY_CHANNELS` /
 * `SOAK_DELIVERY_TURNS` resize it. `--short` (or `SOAK_SHORT=1`) is the CI size: 40 channels ×
 * 6 turns and 8 delivery channels × 6 turns, well under 2 minutes on 2 cores (`.ci/run` runs it
 * after `npm test`). A full-size run replaces the soak's section of test/bench/RESULTS.md.
 */
import { Cause, Duration, Effect, Exit, Layer, type Logger as LoggerType, Logger, ManagedRuntime, References } from "effect"
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { defaultChatSettings } from "../../src/config/ChatConfig"
import type { TurnStatus } from "../../src/domain/PassResult"
import { DELIVERY_FAULTS, runDeliveryPhase } from "./support/deliverySoak"
import { loopcordLayer, makeTextSink, turnInput } from "./support/loopcordContender"
import { writeSection } from "./support/results"
import { soakText } from "./support/loopServer"
import { spawnLoopServer } from "./support/serverProcess"
import { fmt, loadLine, settleHeap, sleep, within } from "./support/stats"

// The heap criterion needs `gc()`: re-run this file under --expose-gc when started without it.
if ((globalThis as { gc?: unknown }).gc === undefined) {
  const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" })
  process.exit(run.status ?? 1)
}

const SHORT = process.argv.includes("--short") || process.env.SOAK_SHORT === "1"
const CHANNELS = Number(process.env.SOAK_CHANNELS ?? (SHORT ? 40 : 200))
const TURNS = Number(process.env.SOAK_TURNS ?? (SHORT ? 6 : 20))
const DELIVERY_CHANNELS = Number(process.env.SOAK_DELIVERY_CHANNELS ?? (SHORT ? 8 : 40))
const DELIVERY_TURNS = Number(process.env.SOAK_DELIVERY_TURNS ?? (SHORT ? 6 : 10))
/** Messages that follow the first one of a flood (13 in all). */
const FLOOD_SIZE = 12
/** What a flood may cost: the running turn plus a full queue (design decision 17). */
const FLOOD_TURN_BOUND = 1 + defaultChatSettings.channelQueueMax
const WARMUP_TURNS = 2
const SEED = Number(process.env.SOAK_SEED ?? Date.now() % 1_000_000)
const TICKET_BOUND_MS = 60_000
const HEAP_TOLERANCE = 0.1

const specStatuses: ReadonlySet<string> = new Set<TurnStatus>([
  "completed",
  "function_call",
  "error",
  "timeout",
  "stopped_by_user",
  "empty_response",
  "follow_up_interrupt",
  "skipped"
])

/** mulberry32: a small seeded PRNG, so a failing run can be replayed with SOAK_SEED. */
const prng = (seed: number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const random = prng(SEED)
const pick = <A>(weighted: ReadonlyArray<readonly [A, number]>): A => {
  const total = weighted.reduce((sum, [, weight]) => sum + weight, 0)
  let roll = random() * total
  for (const [value, weight] of weighted) {
    roll -= weight
    if (roll <= 0) return value
  }
  return weighted[weighted.length - 1]![0]
}

/** One letter per model request (see loopServer.ts `plan:`); the answer `t` comes last. */
const randomPlan = (): string => {
  const length = Math.floor(random() * 4)
  let plan = ""
  for (let step = 0; step < length; step += 1) {
    plan += pick([["e", 40], ["f", 15], ["n", 6], ["s", 6], ["r", 12], ["x", 5], ["d", 5]] as const)
  }
  return `${plan}t`
}

/** Counts log lines by level and keeps the defect reports (the runtime's own word for a crash inside a turn). */
const makeCountingLogger = () => {
  const counts = new Map<string, number>()
  const defects: Array<string> = []
  const logger: LoggerType.Logger<unknown, void> = Logger.make(({ cause, logLevel, message }) => {
    const label = logLevel.toUpperCase()
    counts.set(label, (counts.get(label) ?? 0) + 1)
    const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
    if (Cause.hasDies(cause) || /defect/i.test(text)) defects.push(`${text} ${Cause.pretty(cause)}`.slice(0, 2_000))
  })
  return { logger, counts, defects }
}

/** Tallies kept as counters only: the soak itself must not grow the heap it measures. */
interface Tally {
  turns: number
  readonly byOutcome: Map<string, number>
  /** Outcomes outside the spec's statuses (and other than /kill's cancellation of a queued turn). */
  readonly nonSpec: Map<string, number>
  answerMissing: number
}

const newTally = (): Tally => ({ turns: 0, byOutcome: new Map(), nonSpec: new Map(), answerMissing: 0 })

const main = async () => {
  const startedAt = Date.now()
  const load = loadLine()
  const server = await spawnLoopServer()
  const logs = makeCountingLogger()
  let unhandled = 0
  process.on("unhandledRejection", (reason) => {
    unhandled += 1
    process.stderr.write(`unhandled rejection: ${String(reason)}\n`)
  })
  process.on("uncaughtException", (error) => {
    unhandled += 1
    process.stderr.write(`uncaught exception: ${error.stack ?? String(error)}\n`)
  })

  const runtime = ManagedRuntime.make(Layer.mergeAll(
    loopcordLayer({
      baseUrl: server.baseUrl,
      toolUrl: server.toolUrl,
      tools: ["echo", "fetch_slow", "never_tool"],
      maxSteps: 8,
      toolTimeoutMs: 1_000,
      models: ["soak-primary", "soak-fallback"],
      keys: ["soak-key-1", "soak-key-2", "soak-key-3"],
      loop: {
        streamInactivityTimeout: Duration.millis(2_000),
        firstTokenTimeout: Duration.millis(4_000),
        abandonedSettleTimeout: Duration.millis(200),
        maxConsecutiveToolErrors: 3
      }
    }),
    Logger.layer([logs.logger]),
    Layer.succeed(References.MinimumLogLevel, "Info")
  ))
  const queue = await runtime.runPromise(ChannelQueue)

  let tally = newTally()
  let stuck = 0
  let stuckInFloods = 0
  let crashes = 0
  let kills = 0
  let followUps = 0
  let turnCounter = 0

  /** The turn numbers of each flood's messages (`s<n>`), to count the model turns it cost. */
  let floods: Array<ReadonlyArray<number>> = []

  /** Submits one message; resolves with its record once the ticket settles (or marks it stuck). */
  const submit = (channelId: string, flags: { killed: boolean; followedUp: boolean }, onId?: (turn: number) => void, boundMs = TICKET_BOUND_MS) => {
    const turn = ++turnCounter
    onId?.(turn)
    const id = `s${turn}`
    const plan = randomPlan()
    const sink = makeTextSink()
    const settled = runtime.runPromiseExit(
      Effect.flatMap(queue.submit(turnInput(channelId, `turn:${id}:plan:${plan}`, sink.sink)), (ticket) => ticket.result)
    )
    return within(settled, boundMs).then((exit) => {
      let outcome: string
      if (exit === undefined) {
        stuck += 1
        if (boundMs > TICKET_BOUND_MS) stuckInFloods += 1
        outcome = "STUCK"
      } else if (Exit.isSuccess(exit)) {
        outcome = exit.value.status
      } else {
        const failure = Cause.findErrorOption(exit.cause)
        outcome = failure._tag === "Some" ? failure.value._tag : "DEFECT"
        if (outcome !== "TurnCancelledError") {
          crashes += 1
          process.stderr.write(`turn ${id} (${plan}) failed: ${Cause.pretty(exit.cause)}\n`)
        }
      }
      tally.turns += 1
      tally.byOutcome.set(outcome, (tally.byOutcome.get(outcome) ?? 0) + 1)
      if (!specStatuses.has(outcome) && outcome !== "TurnCancelledError") tally.nonSpec.set(outcome, (tally.nonSpec.get(outcome) ?? 0) + 1)
      // A completed turn that was neither killed nor interrupted shows its whole answer.
      if (outcome === "completed" && !flags.killed && !flags.followedUp && !sink.text().endsWith(soakText(id))) {
        tally.answerMissing += 1
      }
    })
  }

  /** One channel's conversation: `turns` messages, some killed, some followed up at once. */
  const channel = async (channelId: string, turns: number) => {
    for (let sent = 0; sent < turns;) {
      const roll = random()
      const pending: Array<Promise<void>> = []
      if (roll < 0.12) {
        kills += 1
        pending.push(submit(channelId, { killed: true, followedUp: false }))
        sent += 1
        await sleep(random() * 250)
        await runtime.runPromise(queue.kill(channelId, { requesterId: "soak-user" }))
      } else if (roll < 0.3 && roll >= 0.24) {
        // A flood: all at once, so the later ones arrive while the first reply runs; every
        // message but the newest is followed up.
        const ids: Array<number> = []
        for (let index = 0; index <= FLOOD_SIZE; index += 1) {
          // Each may wait for the running turn and a full queue before its own.
          pending.push(submit(channelId, { killed: false, followedUp: index < FLOOD_SIZE }, (turn) => ids.push(turn), TICKET_BOUND_MS * FLOOD_TURN_BOUND))
        }
        floods.push(ids)
        sent += 1
      } else if (roll < 0.24 && sent + 1 < turns) {
        followUps += 1
        pending.push(submit(channelId, { killed: false, followedUp: true }))
        await sleep(random() * 200)
        pending.push(submit(channelId, { killed: false, followedUp: false }))
        sent += 2
      } else {
        pending.push(submit(channelId, { killed: false, followedUp: false }))
        sent += 1
      }
      await Promise.all(pending)
    }
  }

  const channelIds = Array.from({ length: CHANNELS }, (_, index) => `soak-channel-${index}`)

  // Warm-up: the same mix, 2 turns per channel; then the heap every later sample is held to.
  await Promise.all(channelIds.map((id) => channel(id, WARMUP_TURNS)))
  await sleep(1_000)
  await settleHeap()
  const heapAfterWarmup = process.memoryUsage().heapUsed
  tally = newTally()
  floods = []
  const warmupSeconds = (Date.now() - startedAt) / 1000

  const runStartedAt = Date.now()
  await Promise.all(channelIds.map((id) => channel(id, TURNS)))
  const runSeconds = (Date.now() - runStartedAt) / 1000
  // Stragglers (stats daemons, abandoned streams settling) get a moment before the heap sample.
  await sleep(1_000)
  const busy = await runtime.runPromise(queue.busyChannels)
  await settleHeap()
  const heapAfterRun = process.memoryUsage().heapUsed
  const floodRecords = await server.records()
  // After the heap sample: the fake Discord keeps every message and request it saw.
  const deliveryStartedAt = Date.now()
  const delivery = await runDeliveryPhase({
    channels: DELIVERY_CHANNELS,
    turns: DELIVERY_TURNS,
    random,
    queue,
    runPromise: (effect) => runtime.runPromise(effect),
    runPromiseExit: (effect) => runtime.runPromiseExit(effect),
    ticketBoundMs: TICKET_BOUND_MS
  })
  const deliverySeconds = (Date.now() - deliveryStartedAt) / 1000
  const busyAfterDelivery = await runtime.runPromise(queue.busyChannels)
  const serverRecords = await server.records({ clear: true })
  await runtime.dispose()
  await server.stop()

  const nonSpecCount = [...tally.nonSpec.values()].reduce((sum, count) => sum + count, 0)
  const answers = new Map<string, number>()
  for (const steps of Object.values(serverRecords.turns)) {
    for (const step of steps) answers.set(step.answer, (answers.get(step.answer) ?? 0) + 1)
  }
  const floodCosts = floods.map((ids) => ids.filter((turn) => floodRecords.turns[`s${turn}`] !== undefined).length)
  const worstFlood = Math.max(0, ...floodCosts)
  const deliveryLost = [...delivery.lostByFault.values()].reduce((sum, count) => sum + count, 0)
  // Outcomes read `status` or `status/reason`.
  const deliveryNonSpec = [...delivery.byOutcome.keys()].filter((outcome) => !specStatuses.has(outcome.split("/")[0] ?? outcome))
  const heapChange = (heapAfterRun - heapAfterWarmup) / heapAfterWarmup
  const mib = (bytes: number) => bytes / 1024 / 1024

  const criteria = [
    ["zero crashes (defects, unhandled errors, failed turns)", crashes === 0 && delivery.crashes === 0 && unhandled === 0 && logs.defects.length === 0, `${crashes + delivery.crashes} failed turns, ${unhandled} unhandled, ${logs.defects.length} defects logged`],
    ["zero stuck channels", stuck === 0 && busy.length === 0 && delivery.stuck === 0 && busyAfterDelivery.length === 0, `${stuck + delivery.stuck} tickets unsettled after ${TICKET_BOUND_MS / 1000} s per turn they waited for (${stuckInFloods} in floods), ${busy.length + busyAfterDelivery.length} channels still busy`],
    ["every turn ends with a spec status", nonSpecCount === 0 && deliveryNonSpec.length === 0, nonSpecCount === 0 && deliveryNonSpec.length === 0 ? `${tally.turns + delivery.turns} turns` : `${nonSpecCount} turns: ${[...tally.nonSpec.keys(), ...deliveryNonSpec].join(", ")}`],
    ["completed answers shown in full", tally.answerMissing === 0, `${tally.answerMissing} completed turns without their answer`],
    [`a flood of ${FLOOD_SIZE + 1} messages costs at most 1 + CHANNEL_QUEUE_MAX = ${FLOOD_TURN_BOUND} model turns`, worstFlood <= FLOOD_TURN_BOUND, `${floods.length} floods, at most ${worstFlood} model turns each`],
    ["delivery faults: every kind fired", DELIVERY_FAULTS.every((fault) => fault === "none" || (delivery.fired.get(fault) ?? 0) > 0), `fired ${[...delivery.fired].map(([fault, count]) => `${fault} ${count}`).join(", ") || "none"}`],
    ["delivery faults: no completed turn lost or repeated text", deliveryLost === 0 && delivery.repeated === 0, `${deliveryLost} completed turns lost text${deliveryLost === 0 ? "" : ` (${[...delivery.lostByFault].map(([fault, count]) => `${fault} ${count}`).join(", ")})`}, ${delivery.repeated} repeated text`],
    ["delivery faults: a recoverable or transient one (10008, 30046, 10015, 5xx) still completes", delivery.failedDespiteRecoverable === 0, `${delivery.failedDespiteRecoverable} turns did not complete after a recoverable refusal`],
    ["delivery faults: a final one (50013, 5xx for good) ends error / delivery_failed, never completed", delivery.finalNotReported === 0, `${delivery.finalNotReported} turns whose delivery failed for good ended otherwise`],
    [`heap after the run within ${HEAP_TOLERANCE * 100} % of heap after warm-up`, Math.abs(heapChange) <= HEAP_TOLERANCE, `${fmt(mib(heapAfterWarmup), 1)} MiB → ${fmt(mib(heapAfterRun), 1)} MiB (${heapChange >= 0 ? "+" : ""}${fmt(heapChange * 100, 1)} %)`]
  ] as const
  const passed = criteria.every(([, ok]) => ok)

  const lines = [
    "## Soak: 200 channels × 20 turns through the ChannelQueue, floods, delivery faults",
    "",
    `Seed ${SEED}${SHORT ? " (--short)" : ""}; ${CHANNELS} channels × ${TURNS} turns after a warm-up of ${WARMUP_TURNS} turns per channel (${fmt(warmupSeconds, 1)} s); run ${fmt(runSeconds, 1)} s of real time. Real loopback HTTP, OpenAI-compatible provider, 2 models × 3 keys; tool timeout 1 s, inactivity 2 s, first token 4 s.`,
    `Delivery phase: ${DELIVERY_CHANNELS} channels × ${DELIVERY_TURNS} turns on the fake Discord through a real discord.js client (half bot messages, half persona webhooks), ${fmt(deliverySeconds, 1)} s; faults scripted ${[...delivery.faults].map(([fault, count]) => `${fault} ${count}`).join(", ")}; fired ${[...delivery.fired].map(([fault, count]) => `${fault} ${count}`).join(", ") || "none"}; outcomes ${[...delivery.byOutcome].map(([outcome, count]) => `${outcome} ${count}`).join(", ")}.`,
    load,
    "",
    "| criterion | result | detail |",
    "|---|---|---|",
    ...criteria.map(([name, ok, detail]) => `| ${name} | ${ok ? "pass" : "FAIL"} | ${detail} |`),
    "",
    `Injected: ${kills} kills, ${followUps} follow-ups; the server answered ${[...answers].sort((a, b) => b[1] - a[1]).map(([answer, count]) => `${count} ${answer}`).join(", ")}.`,
    `Turn outcomes: ${[...tally.byOutcome].sort((a, b) => b[1] - a[1]).map(([outcome, count]) => `${outcome} ${count}`).join(", ")}.`,
    `Log lines by level: ${[...logs.counts].map(([level, count]) => `${level} ${count}`).join(", ")}.`,
    "",
    `Soak ${passed ? "PASSED" : "FAILED"}.`
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
  // A full-size run is recorded in RESULTS.md (its own section; the benches' stay as they are).
  if (CHANNELS === 200 && TURNS === 20) writeSection("soak.ts", lines.join("\n"), (Date.now() - startedAt) / 1000)
  for (const defect of logs.defects.slice(0, 5)) process.stderr.write(`defect: ${defect}\n`)
  return passed
}

main().then(
  (passed) => process.exit(passed ? 0 : 1),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
