import { Effect, Option } from "effect"
import type { ResponseSink } from "./ResponseSink"
import type { LoopConfig } from "../config/LoopConfig"
import type { FunctionCall } from "../domain/FunctionCall"
import { ToolCallOutcome } from "../domain/ToolCallOutcome"
import { responsePayload } from "../domain/ToolHistoryEntry"
import { toolFailure, toolSuccess } from "../domain/ToolResult"
import { ToolAffordances } from "../tools/ToolAffordances"
import { safeJson } from "../tools/toolFailureDetails"
import { ToolRegistry } from "../tools/ToolRegistry"
import type { ToolUsageStats } from "../tools/ToolUsageStats"
import { spendOncePerTurnTool } from "../tools/TurnState"
import { approvalCheckpoint, approved } from "./approvalCheckpoint"
import { callCheckpoint, Checkpoint, rememberCallOutcome } from "./CallCheckpoint"
import type { AttemptInfo } from "./AttemptInfo"
import { contextRestartType, handleEnhancedContextRestart } from "./contextRestart"
import type { DispatchedCall } from "./DispatchedCall"
import type { PendingContextStash } from "./PendingContextStash"
import { CurrentTurn } from "./CurrentTurn"
import { raceTool } from "./raceTool"
import type { ThoughtLog } from "./ThoughtLog"
import { toolCallHistory } from "./toolCallHistory"
import { refusalBeforeDispatch, refuseInStopResponse, refuseTruncatedCall } from "./toolCallRefusals"
import { reportToolCall } from "./toolCallReport"
import { appliedTurnEffects, noTurnEffects } from "./turnEffects"
import { TurnSignals } from "./TurnSignals"

interface ExecuteToolCallInput {
  /** One call of the pass, as the provider produced it (validated here). */
  readonly call: FunctionCall
  /** Everything the pass showed before its calls (shared by every call of the pass). */
  readonly preToolText: string
  /** Loop iteration index (0-based); sets `showKillHint` from the soft-warning iteration on. */
  readonly iteration: number
  readonly attempt: AttemptInfo
}

/** The services executeToolCall reads; the loop provides them once per turn. */
export type ExecuteToolCallServices =
  | CurrentTurn
  | TurnSignals
  | ToolRegistry
  | ThoughtLog
  | LoopConfig
  | ResponseSink
  | ToolAffordances
  | ToolUsageStats
  | PendingContextStash

/**
 * One tool call of the loop: validate, gate, dispatch and record it (docs/architecture.md, the
 * tool loop). Never fails: a tool failure, timeout or refusal becomes a failed history entry for
 * the model; only a malformed call (`error`) or a stop (`stopped_by_user`) aborts the turn.
 * What a tool needs beyond that (once per turn, a turn effect) it declares (ToolCapabilities).
 */
// Untraced: it runs once per tool call, and a span per call is pure overhead with no tracer installed.
export const executeToolCall = Effect.fnUntraced(function*(
  input: ExecuteToolCallInput
): Effect.fn.Return<ToolCallOutcome, never, ExecuteToolCallServices> {
  const { attempt, iteration, preToolText } = input

  // The provider must have produced a call with a name.
  const functionCall: FunctionCall | undefined = input.call
  if (typeof functionCall !== "object" || functionCall === null || typeof functionCall.name !== "string") {
    yield* Effect.logError("Malformed function call result: the call has no tool name").pipe(
      Effect.annotateLogs({ call: safeJson(functionCall) })
    )
    return ToolCallOutcome.Abort({ status: "error" })
  }
  const name = functionCall.name.trim()
  if (name.length === 0) return ToolCallOutcome.Abort({ status: "error" })

  const turn = yield* CurrentTurn
  const signals = yield* TurnSignals
  const registry = yield* ToolRegistry

  /** A stop aborts; a follow-up is already queued, so it is cleared and the chain goes on. */
  const stopRequested = Effect.gen(function*() {
    const request = yield* signals.current
    if (Option.isNone(request)) return false
    if (request.value._tag === "Stop") return true
    yield* signals.clearFollowUp
    yield* Effect.logInfo(`Follow-up queued during the tool chain at '${name}': cleared, the chain continues`)
    return false
  })

  // Stop check before anything runs (the stop itself is left for the loop to consume).
  if (yield* stopRequested) return ToolCallOutcome.Abort({ status: "stopped_by_user" })

  // The answer to a /kill acknowledges; it never re-runs the killed work.
  if (turn.isStopResponse) return yield* refuseInStopResponse(functionCall, name, preToolText)

  // Truncated arguments: never dispatched, and the partial arguments are never replayed.
  if (functionCall.argumentsTruncated === true) {
    return yield* refuseTruncatedCall(functionCall, name, preToolText)
  }

  const registered = Option.getOrUndefined(yield* registry.get(name))
  const canonicalName = registered?.name ?? name
  const args = functionCall.args
  const refused = yield* refusalBeforeDispatch(functionCall, name, canonicalName)

  // ── Call checkpoint hook (src/loop/CallCheckpoint.ts): provided around the calls by a loop hook ──
  // The call is looked at before dispatch; an identical successful one may be reused, an
  // identical refused one never runs. Without a checkpoint: always `Dispatch`.
  const checkpoint = refused === undefined
    ? yield* callCheckpoint({ name, canonicalName, description: registered?.description, args: args ?? {}, narration: preToolText })
    : Checkpoint.Dispatch({ key: undefined })
  if (checkpoint._tag === "Stopped") return ToolCallOutcome.Abort({ status: "stopped_by_user" })
  if (checkpoint._tag === "Reused" || checkpoint._tag === "Rejected") {
    const decided = checkpoint._tag === "Reused"
      ? { result: toolSuccess(undefined, { endTurn: checkpoint.remembered.endTurn, ...(checkpoint.remembered.imageMetadata === undefined ? {} : { imageMetadata: checkpoint.remembered.imageMetadata }) }), payload: checkpoint.remembered.payload }
      : { result: toolFailure(checkpoint.rejection.reason), payload: checkpoint.rejection }
    const outcome = yield* toolCallHistory({
      name,
      replayedCall: functionCall,
      result: decided.result,
      payload: decided.payload,
      accumulatedText: preToolText,
      turnEffects: noTurnEffects,
      durationMs: 0
    })
    return ToolCallOutcome.History({ ...outcome, checkpointStatus: checkpoint._tag === "Reused" ? "reused" : "rejected" })
  }
  // ── end of the call checkpoint hook ──

  // ── Tool approval hook (src/loop/approvalCheckpoint.ts): a call the front marks waits for a human first ──
  const approval = refused === undefined ? yield* approvalCheckpoint(name, canonicalName, args ?? {}) : approved
  if (approval._tag === "Stopped") return ToolCallOutcome.Abort({ status: "stopped_by_user" })
  const denied: DispatchedCall | undefined = approval._tag === "Denied"
    ? { result: approval.result, replayedCall: functionCall, blocked: true, raced: false, durationMs: 0 }
    : undefined
  // ── end of the tool approval hook ──

  const dispatched: DispatchedCall = refused ?? denied ??
    { ...(yield* raceTool(name, args ?? {}, iteration, attempt)), replayedCall: functionCall, blocked: false, raced: true }
  // A stop registered while the tool ran wins: the model never sees the result.
  if (dispatched.raced && (yield* stopRequested)) return ToolCallOutcome.Abort({ status: "stopped_by_user" })

  const { blocked, durationMs, replayedCall, result } = dispatched
  const success = result.success === true

  // Affordance retention: a tool that worked stays exposed for the next few turns.
  if (success && turn.deliberate.active) {
    yield* (yield* ToolAffordances).retain(turn.channelId, name, turn.deliberate.contextTurns)
  }

  yield* reportToolCall({ name, canonicalName, args, result, blocked })

  // Context restart: the enriched context replaces the tool response.
  if (success && contextRestartType(result.data) !== undefined && (yield* handleEnhancedContextRestart(result.data))) {
    return ToolCallOutcome.Restart({ functionName: name, durationMs })
  }

  // A once-per-turn tool that worked is spent: hidden from later passes, a later call refused.
  if (success && registered?.oncePerTurn === true) yield* spendOncePerTurnTool(turn.state, canonicalName)

  // The paired call and response replayed on the next pass, with what the result changes about the reply.
  const payload = blocked ? result.data : responsePayload(name, result)
  // A call the checkpoint let through may be reused, never re-run, if repeated.
  yield* rememberCallOutcome(checkpoint.key, result, payload)
  return yield* toolCallHistory({
    name,
    replayedCall,
    result,
    payload,
    accumulatedText: preToolText,
    turnEffects: appliedTurnEffects(registered?.turnEffect, result),
    durationMs,
    endsTurnAfterText: registered?.endsTurnAfterText === true
  })
})
