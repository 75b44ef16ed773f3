/**
 * One contender in a fresh process, for the hung-tool part of loopCancel.bench.ts: a warm-up
 * turn (so connections and timers of normal operation exist before the baseline), a snapshot
 * of `process.getActiveResourcesInfo()`, then one turn whose tool returns a Promise that never
 * settles and ignores its signal, with a 10 s per-tool timeout where the contender has one.
 * If the turn has not settled after the bound it is killed. Prints one JSON line (HangResult).
 *
 *   node --import tsx hangWorker.ts <loopcord|aisdk|hand> <baseUrl> <toolUrl> <toolTimeoutMs> <boundMs>
 */
import { nowNs, type TurnHandle } from "./contender"
import { loadContender } from "./loadContender"
import { expectedLoopText } from "./loopServer"
import { turnIds } from "./runTurns"
import { connectLoopServer } from "./serverProcess"
import { check, ms, sleep, within } from "./stats"

export interface HangResult {
  /** The tool call reached the client → the loop's next model request, ms; undefined when it never went on. */
  readonly continuedAfterMs: number | undefined
  readonly finalText: string | undefined
  /** Resource kinds whose count changed across the turn, e.g. `Timeout +1`; `none` when nothing did. */
  readonly handles: string
  readonly settled: boolean
}

const [which = "loopcord", baseUrl = "", toolUrl = "", timeoutText = "10000", boundText = "20000"] = process.argv.slice(2)

const handleCounts = (): Map<string, number> => {
  const counts = new Map<string, number>()
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1)
  return counts
}

const handleDiff = (before: Map<string, number>, after: Map<string, number>): string => {
  const changed = [...new Set([...before.keys(), ...after.keys()])]
    .map((kind) => [kind, (after.get(kind) ?? 0) - (before.get(kind) ?? 0)] as const)
    .filter(([, delta]) => delta !== 0)
  return changed.length === 0 ? "none" : changed.map(([kind, delta]) => `${kind} ${delta > 0 ? "+" : ""}${delta}`).join(", ")
}

const settleWithin = (handle: TurnHandle, millis: number) =>
  within(handle.done.then((outcome) => ({ outcome, at: nowNs() })), millis)

const main = async () => {
  const server = connectLoopServer(baseUrl, toolUrl)
  const contender = await loadContender(which, {
    baseUrl,
    toolUrl,
    tools: ["echo", "fetch_slow", "never_tool"],
    maxSteps: 21,
    toolTimeoutMs: Number(timeoutText)
  })
  const [warm, id] = turnIds(`${which}h`, 2) as [string, string]
  const warmed = await contender.start(`turn:${warm}:loop:1`).done
  check(warmed.text === expectedLoopText(warm, 1), `${which}: warm-up turn text ${JSON.stringify(warmed.text)}`)
  await sleep(200)
  const before = handleCounts()

  const handle = contender.start(`turn:${id}:hangtool`)
  let result = await settleWithin(handle, Number(boundText))
  if (result === undefined) {
    handle.kill()
    result = await settleWithin(handle, 2_000)
  }
  await sleep(500)
  const after = handleCounts()
  const requests = (await server.records()).turns[id] ?? []
  const toolCallSent = requests[0]?.lastByte
  const continued = requests[1]?.arrived
  const out: HangResult = {
    continuedAfterMs: toolCallSent !== undefined && continued !== undefined ? ms(continued - toolCallSent) : undefined,
    finalText: result?.outcome.text,
    handles: handleDiff(before, after),
    settled: result !== undefined
  }
  process.stdout.write(`${JSON.stringify(out)}\n`)
  // A contender whose turn never settled cannot be closed cleanly; the process exit ends it.
  if (result !== undefined) await contender.close()
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
