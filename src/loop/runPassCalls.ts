import { Deferred, Effect, Option, Semaphore } from "effect"
import { ResponseSink } from "./ResponseSink"
import { ToolActivity } from "./ToolActivity"
import { LoopConfig } from "../config/LoopConfig"
import { FunctionCall } from "../domain/FunctionCall"
import { ToolCallOutcome } from "../domain/ToolCallOutcome"
import { responsePayload, ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import { toolFailure } from "../domain/ToolResult"
import { ToolRegistry } from "../tools/ToolRegistry"
import type { AttemptInfo } from "./AttemptInfo"
import { executeToolCall, type ExecuteToolCallServices } from "./executeToolCall"

interface PassCallsInput {
  /** Every call of the pass, in the model's order. */
  readonly calls: ReadonlyArray<FunctionCall>
  /** Everything the pass showed before its calls. */
  readonly preToolText: string
  readonly iteration: number
  readonly attempt: AttemptInfo
}

/** One call of the pass and what became of it. */
export interface PassCallOutcome {
  readonly call: FunctionCall
  readonly outcome: ToolCallOutcome
  /**
   * Past the per-pass cap: refused without running. Our limit, not the tool's failure, so it
   * neither counts toward nor resets the consecutive-error cap.
   */
  readonly overCap: boolean
}

const hasName = (call: unknown): call is FunctionCall =>
  typeof call === "object" && call !== null && "name" in call && typeof call.name === "string" && call.name.trim().length > 0

/**
 * Runs the calls of one pass (docs/architecture.md, "Tool calls of one pass"): each through
 * executeToolCall (validated, gated, raced against its own fresh timeout and the turn's kill),
 * at most `toolCallConcurrency` at once; tools that declare themselves `sequential` run one at
 * a time in the model's order. Calls past `maxToolCallsPerPass` are refused, never run. The
 * outcomes come back in the model's order, once every call has ended; all of them run under
 * the caller's scope, so interrupting the pass interrupts every call.
 */
export const runPassCalls = Effect.fnUntraced(function*(
  input: PassCallsInput
): Effect.fn.Return<ReadonlyArray<PassCallOutcome>, never, ExecuteToolCallServices> {
  const config = yield* LoopConfig
  const registry = yield* ToolRegistry
  const sink = yield* ResponseSink
  const notify = sink.toolActivity ?? (() => Effect.void)
  const { attempt, iteration, preToolText } = input

  // A malformed call fails the attempt before any call runs: another model may do better, and
  // the well-formed calls would run again there.
  const malformedAt = input.calls.findIndex((call) => !hasName(call))
  if (malformedAt >= 0) {
    const malformed = input.calls[malformedAt]!
    return [{ call: malformed, outcome: yield* executeToolCall({ call: malformed, preToolText, iteration, attempt }), overCap: false }]
  }

  /** One call through the per-call stage, with its tool activity around it. */
  // Combinators rather than a generator: this runs once per call, on the hot path.
  const runOne = (call: FunctionCall): Effect.Effect<PassCallOutcome, never, ExecuteToolCallServices> => {
    const name = call.name.trim()
    return Effect.andThen(notify(ToolActivity.Started({ name, args: call.args })), executeToolCall({ call, preToolText, iteration, attempt })).pipe(
      Effect.tap((outcome) => notify(activityOf(name, outcome))),
      Effect.map((outcome): PassCallOutcome => ({ call, outcome, overCap: false }))
    )
  }

  const kept = input.calls.slice(0, config.maxToolCallsPerPass)
  const refused = input.calls.slice(config.maxToolCallsPerPass)
  if (refused.length > 0) {
    yield* Effect.logWarning(`the pass made ${input.calls.length} tool calls; the ${refused.length} past the first ${kept.length} are refused`)
  }

  // One call (the common case) needs no slots, no ordering and no fiber of its own.
  if (kept.length === 1 && refused.length === 0) {
    return [yield* runOne(kept[0]!)]
  }

  const slots = yield* Semaphore.make(config.toolCallConcurrency)
  // Each sequential call waits for the previous sequential call to end before it takes a slot.
  let previousSequential: Deferred.Deferred<void> | undefined = undefined
  const runs: Array<Effect.Effect<PassCallOutcome, never, ExecuteToolCallServices>> = []
  for (const call of kept) {
    const name = call.name.trim()
    const sequential = Option.match(yield* registry.get(name), { onNone: () => false, onSome: (tool) => tool.sequential === true })
    const run = runOne(call)
    if (!sequential) {
      runs.push(slots.withPermits(1)(run))
      continue
    }
    const before = previousSequential
    const done = yield* Deferred.make<void>()
    previousSequential = done
    const waitTurn = before === undefined ? Effect.void : Deferred.await(before)
    runs.push(Effect.ensuring(Effect.andThen(waitTurn, slots.withPermits(1)(run)), Deferred.succeed(done, undefined)))
  }

  const ran = yield* Effect.all(runs, { concurrency: "unbounded" })
  return [...ran, ...refused.map((call, index) => refusedOverCap(call, kept.length + index + 1, config.maxToolCallsPerPass))]
})

const activityOf = (name: string, outcome: ToolCallOutcome): ToolActivity =>
  outcome._tag === "Abort"
    ? ToolActivity.Aborted({ name })
    : ToolActivity.Finished({ name, success: outcome._tag === "Restart" || outcome.success, durationMs: outcome.durationMs })

/** The answer to a call past the cap: nothing ran, and the model is told why and what to do. */
const refusedOverCap = (call: FunctionCall, position: number, cap: number): PassCallOutcome => {
  const name = call.name.trim()
  const result = toolFailure(
    `Tool "${name}" was not run: one reply may make at most ${cap} tool calls, and this was call ${position}. ` +
      `Nothing was executed; call it again in a later reply if it is still needed.`
  )
  // Cut arguments are never replayed, whichever way the call was refused.
  const replayed = call.argumentsTruncated === true ? FunctionCall({ ...call, args: undefined }) : call
  const historyEntry = ToolHistoryEntry({
    functionCall: replayed,
    functionResponse: { name: replayed.name, response: { result: responsePayload(name, result) } }
  })
  const outcome = ToolCallOutcome.History({
    functionName: name,
    success: false,
    endTurn: false,
    endsTurnAfterText: false,
    responseDelivered: false,
    stickerSelection: undefined,
    historyEntry,
    durationMs: 0
  })
  return { call, outcome, overCap: true }
}
