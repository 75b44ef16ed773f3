import { Clock, Duration, Effect, Exit, Option } from "effect"
import { ResponseSink } from "./ResponseSink"
import { UserNotice } from "./UserNotice"
import { LoopConfig } from "../config/LoopConfig"
import { FunctionCall, type ToolArgs } from "../domain/FunctionCall"
import type { Sticker } from "../domain/Sticker"
import { ToolCallOutcome } from "../domain/ToolCallOutcome"
import { preToolTextParts, responsePayload, ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import { operatorReason, toolFailure, type ToolResult, toolSuccess } from "../domain/ToolResult"
import { StickerCatalog } from "../tools/StickerCatalog"
import { ToolAffordances } from "../tools/ToolAffordances"
import { ToolContext, type ToolContextShape } from "../tools/ToolContext"
import { failureDetails, safeJson } from "../tools/toolFailureDetails"
import { ToolRegistry } from "../tools/ToolRegistry"
import { ToolUsageStats } from "../tools/ToolUsageStats"
import { setFlag } from "../tools/TurnState"
import { approvalCheckpoint, approved } from "./approvalCheckpoint"
import { callCheckpoint, Checkpoint, rememberCallOutcome } from "./CallCheckpoint"
import type { AttemptInfo } from "./AttemptInfo"
import { contextRestartType, handleEnhancedContextRestart } from "./contextRestart"
import { makeFirstWins } from "./FirstWins"
import { longestNap } from "./TurnAlarm"
import type { PendingContextStash } from "./PendingContextStash"
import { CurrentTurn, type TurnContextShape } from "./CurrentTurn"
import { ThoughtLog } from "./ThoughtLog"
import { TurnSignals } from "./TurnSignals"

export interface ExecuteToolCallInput {
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
  | StickerCatalog
  | ToolUsageStats
  | PendingContextStash

/** A successful call of this tool must not run again this turn. */
export const SHORT_TERM_MEMORY_TOOL = "update_short_term_memory"
/** The tool whose result picks the sticker sent with the reply. */
export const STICKER_TOOL = "select_sticker_for_response"

/** What the dispatch phase produced, before the shared post-processing (steps 7–14). */
interface Dispatched {
  readonly result: ToolResult
  /** The call as it is replayed to the model (arguments cleared when they could not be used). */
  readonly replayedCall: FunctionCall
  /** Blocked by deliberate tool mode: replayed as the structured block object. */
  readonly blocked: boolean
  /** The tool was actually dispatched (raced against its timeout and /kill). */
  readonly raced: boolean
  readonly durationMs: number
}

const isPlainObject = (value: unknown): value is ToolArgs => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

const kindOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`)

/**
 * Stage 02 of the pipeline: validate, gate, dispatch and record one tool call (docs/architecture.md,
 * "The order of a tool call").
 * Never fails: a tool failure, timeout or refusal becomes a failed history entry for the model;
 * only a malformed call (`error`) or a stop (`stopped_by_user`) aborts the turn.
 */
// Untraced: it runs once per tool call, and a span per call is pure overhead with no tracer installed.
export const executeToolCall = Effect.fnUntraced(function*(
  input: ExecuteToolCallInput
): Effect.fn.Return<ToolCallOutcome, never, ExecuteToolCallServices> {
  const { attempt, iteration, preToolText } = input

  // 1. Validate: the provider must have produced a call with a name.
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
  const thoughtLog = yield* ThoughtLog

  /** A stop aborts; a follow-up is already queued, so it is cleared and the chain goes on. */
  const stopRequested = Effect.gen(function*() {
    const request = yield* signals.current
    if (Option.isNone(request)) return false
    if (request.value._tag === "Stop") return true
    yield* signals.clearFollowUp
    yield* Effect.logInfo(`Follow-up queued during the tool chain at '${name}': cleared, the chain continues`)
    return false
  })

  // 2. Stop check before anything runs (the stop itself is left for the loop to consume).
  if (yield* stopRequested) return ToolCallOutcome.Abort({ status: "stopped_by_user" })

  // The answer to a /kill acknowledges; it never re-runs the killed work.
  if (turn.isStopResponse) return yield* refuseInStopResponse(functionCall, name, preToolText)

  // 4. Truncated arguments: never dispatched, and the partial arguments are never replayed.
  if (functionCall.argumentsTruncated === true) {
    return yield* refuseTruncatedCall(functionCall, name, preToolText)
  }

  const registered = yield* registry.get(name)
  const canonicalName = Option.match(registered, { onNone: () => name, onSome: (tool) => tool.name })
  const args = functionCall.args

  const refused: Dispatched | undefined = yield* Effect.gen(function*() {
    // 1 (continued). Arguments that are not a JSON object cannot be passed to any tool.
    if (args !== undefined && !isPlainObject(args)) {
      const reason = `The arguments for tool "${name}" must be a JSON object of named parameters, but the call ` +
        `carried ${kindOf(args)}. Nothing was executed; call the tool again with an object of arguments.`
      yield* Effect.logWarning(`Refused tool call with non-object arguments: ${name}`)
      return { result: toolFailure(reason), replayedCall: FunctionCall({ ...functionCall, args: undefined }), blocked: false, raced: false, durationMs: 0 }
    }
    // 5. Deliberate tool mode: only the tools the trigger phrases exposed may run; a message
    // that asked for no tool exposes none (the turn declared none, so a call is refused too).
    const allowed = turn.deliberate.allowedNames
    const noToolAsked = turn.deliberate.disableAllTools === true
    if (turn.deliberate.active && (noToolAsked || (allowed.length > 0 && !allowed.includes(name) && !allowed.includes(canonicalName)))) {
      yield* Effect.logWarning(`Tool '${name}' blocked by deliberate tool mode; allowed tools: ${noToolAsked ? "none (no trigger)" : allowed.join(", ")}`)
      const reason = `Tool "${name}" was not exposed for this deliberate tool mode turn.`
      const result = toolFailure(reason, {
        data: { status: "blocked_by_deliberate_tool_mode", functionName: name, allowedToolNames: [...allowed], reason }
      })
      return { result, replayedCall: functionCall, blocked: true, raced: false, durationMs: 0 }
    }
    return undefined
  })

  // ── Call checkpoint hook (src/loop/CallCheckpoint.ts): provided around the calls by a loop hook ──
  // The call is looked at before dispatch; an identical successful one may be reused, an
  // identical refused one never runs. Without a checkpoint: always `Dispatch`.
  const checkpoint = refused === undefined
    ? yield* callCheckpoint({
      name,
      canonicalName,
      description: Option.getOrUndefined(Option.map(registered, (tool) => tool.description)),
      args: args ?? {},
      narration: preToolText
    })
    : Checkpoint.Dispatch({ key: undefined })
  if (checkpoint._tag === "Stopped") return ToolCallOutcome.Abort({ status: "stopped_by_user" })
  if (checkpoint._tag === "Reused" || checkpoint._tag === "Rejected") {
    const decided = checkpoint._tag === "Reused"
      ? { result: toolSuccess(undefined, { endTurn: checkpoint.remembered.endTurn, ...(checkpoint.remembered.imageMetadata === undefined ? {} : { imageMetadata: checkpoint.remembered.imageMetadata }) }), payload: checkpoint.remembered.payload }
      : { result: toolFailure(checkpoint.rejection.reason), payload: checkpoint.rejection }
    const outcome = yield* historyOutcome({
      name,
      replayedCall: functionCall,
      result: decided.result,
      payload: decided.payload,
      accumulatedText: preToolText,
      stickerSelection: undefined,
      durationMs: 0
    })
    return ToolCallOutcome.History({ ...outcome, reviewStatus: checkpoint._tag === "Reused" ? "reused" : "rejected" })
  }
  // ── end of the call checkpoint hook ──

  // ── Tool approval hook (src/loop/approvalCheckpoint.ts): a call the front marks waits for a human first ──
  const approval = refused === undefined ? yield* approvalCheckpoint(name, canonicalName, args ?? {}) : approved
  if (approval._tag === "Stopped") return ToolCallOutcome.Abort({ status: "stopped_by_user" })
  const denied: Dispatched | undefined = approval._tag === "Denied"
    ? { result: approval.result, replayedCall: functionCall, blocked: true, raced: false, durationMs: 0 }
    : undefined
  // ── end of the tool approval hook ──

  // 3 + 6. Build the call's context and race the tool against its timeout (which starts now) and /kill.
  const dispatched: Dispatched = refused ?? denied ??
    { ...(yield* dispatch(name, args ?? {}, iteration, attempt)), replayedCall: functionCall, blocked: false, raced: true }
  // 6 (after the race). A stop registered while the tool ran wins: the model never sees the result.
  if (dispatched.raced && (yield* stopRequested)) return ToolCallOutcome.Abort({ status: "stopped_by_user" })

  const { blocked, durationMs, replayedCall, result } = dispatched
  const success = result.success === true

  // 7. Affordance retention: a tool that worked stays exposed for the next few turns.
  if (success && turn.deliberate.active) {
    yield* (yield* ToolAffordances).retain(turn.channelId, name, turn.deliberate.contextTurns)
  }

  // 8. Hidden notices and usage stats.
  if (!success) {
    yield* thoughtLog.post({
      kind: "tool_failed",
      severity: "error",
      title: `Tool failed: ${name}`,
      description: operatorReason(result),
      details: failureDetails(args, result.data),
      channelId: turn.channelId,
      guildId: turn.guildId
    })
  } else if (!blocked && !turn.isDM) {
    const stats = yield* ToolUsageStats
    // Detached so a slow or broken stats store never delays or fails the call. A daemon rather
    // than a child fiber: the caller may run this call in a short-lived fiber, which would
    // interrupt a child before the write lands. The store bounds the daemon's life itself
    // (ToolUsageStats contract; STORE_TIMEOUT_MS): a timeout here would fork two more fibers
    // per call for a bound the store already keeps.
    yield* Effect.forkDaemon(
      Effect.catchAllCause(stats.record(canonicalName, turn.guildId), (cause) => Effect.logWarning("Recording tool usage failed", cause))
    )
  }
  const trigger = turn.deliberate.triggerMatchByToolName.get(name) ?? turn.deliberate.triggerMatchByToolName.get(canonicalName)
  if (turn.deliberate.active && trigger !== undefined && !blocked) {
    yield* thoughtLog.post({
      kind: "deliberate_trigger",
      severity: "info",
      title: `Deliberate tool mode: ${name}`,
      description: `Tool "${name}" was exposed by the trigger '${trigger.trigger.replaceAll("`", "'")}' (source: ${trigger.source}).`,
      channelId: turn.channelId,
      guildId: turn.guildId
    })
  }

  // 9. Context restart: the enriched context replaces the tool response.
  if (success && contextRestartType(result.data) !== undefined && (yield* handleEnhancedContextRestart(result.data))) {
    return ToolCallOutcome.Restart({ functionName: name, durationMs })
  }

  // 10. One short-term-memory update per turn.
  if (success && canonicalName === SHORT_TERM_MEMORY_TOOL) {
    yield* setFlag(turn.state, "disableShortTermMemoryUpdate")
  }

  // 11. Sticker choice: the latest call of the sticker tool wins, a miss clears an earlier pick.
  const stickerSelection = canonicalName === STICKER_TOOL ? yield* selectedSticker(turn, result) : undefined

  // 12–14. The paired call and response replayed on the next pass.
  const payload = blocked ? result.data : responsePayload(name, result)
  // A call the checkpoint let through may be reused, never re-run, if repeated.
  yield* rememberCallOutcome(checkpoint.key, result, payload)
  return yield* historyOutcome({
    name,
    replayedCall,
    result,
    payload,
    accumulatedText: preToolText,
    stickerSelection,
    durationMs
  })
})

/** Steps 3 and 6: the ToolContext, then the tool vs its timeout vs /kill; losers are interrupted. */
const dispatch = (name: string, args: ToolArgs, iteration: number, attempt: AttemptInfo) =>
  Effect.gen(function*() {
    const turn = yield* CurrentTurn
    const signals = yield* TurnSignals
    const registry = yield* ToolRegistry
    const config = yield* LoopConfig
    const sink = yield* ResponseSink
    const suppressProgressNotices = !turn.shouldSurfaceUserErrors
    const abort = new AbortController()
    const context: ToolContextShape = {
      channelId: turn.channelId,
      guildId: turn.guildId,
      userId: turn.userId,
      messageId: turn.messageId,
      isDM: turn.isDM,
      provider: attempt.provider,
      model: attempt.model,
      locale: turn.locale,
      personaId: turn.persona.id,
      personaName: turn.persona.name,
      personaAvatarUrl: turn.persona.avatarUrl,
      isUserImpersonation: turn.isUserImpersonation,
      impersonatedUserId: turn.impersonatedUserId,
      suppressProgressNotices,
      showKillHint: iteration >= config.softWarnIteration,
      iteration,
      turnState: turn.state,
      abortSignal: abort.signal,
      killed: signals.awaitKill,
      progress: (text) => suppressProgressNotices ? Effect.void : sink.notice(UserNotice.ToolProgress({ tool: name, text }))
    }
    const timeoutMs = Duration.toMillis(config.toolExecutionTimeout)
    const timedOut = toolFailure(`Tool "${name}" timed out after ${timeoutMs / 1000}s.`)
    const killed = toolFailure(`Tool "${name}" was killed.`)
    const startedAt = yield* Clock.currentTimeMillis
    // The first of the tool, its deadline and /kill decides. The tool runs as a daemon
    // interrupted in the background once it lost, so its slow or uninterruptible cleanup never
    // delays the outcome (its finalizers still run); the deadline is watched by the turn's alarm
    // and /kill heard by a signal listener, so neither needs a fiber of its own. The onExit below
    // reaches the tool, the alarm and the listener on every path.
    const first = makeFirstWins<ToolResult>()
    const tool = yield* Effect.forkDaemon(
      Effect.map(registry.execute(name, args).pipe(Effect.provideService(ToolContext, context)), first.settle)
    )
    const disarm = yield* signals.alarm.arm(() => startedAt + timeoutMs, longestNap(config), () => first.settle(timedOut))
    const stopListening = yield* signals.onKill(() => first.settle(killed))
    const self = yield* Effect.fiberId
    const result = yield* first.await.pipe(
      Effect.onExit((exit) =>
        Effect.sync(() => {
          stopListening()
          disarm()
          // Abandoned (timeout, kill, the turn interrupted): promise-based work is cancelled on the wire at once.
          if (Exit.isFailure(exit) || exit.value === timedOut || exit.value === killed) abort.abort()
          tool.unsafeInterruptAsFork(self)
        })
      )
    )
    const durationMs = (yield* Clock.currentTimeMillis) - startedAt
    yield* Effect.logInfo(`Function call completed: ${name} (${durationMs}ms)`)
    return { result, durationMs }
  })

/** Step 4: a call whose arguments the provider cut short is refused and reported as truncated. */
const refuseTruncatedCall = (functionCall: FunctionCall, name: string, accumulatedText: string) =>
  Effect.gen(function*() {
    const turn = yield* CurrentTurn
    const recoveredKeys = Object.keys(functionCall.args ?? {})
    // Error level on purpose: truncation happens in production, where warnings are filtered out.
    yield* Effect.logError(`Refused tool call '${name}': the provider truncated its arguments`).pipe(
      Effect.annotateLogs({ errorType: "TOOL_ARGUMENTS_TRUNCATED", channelId: turn.channelId, recoveredKeys })
    )
    const reason = `The arguments of this "${name}" call were truncated by the provider mid-payload, so the call ` +
      `was refused: nothing was executed or updated. Reissue the complete call, with all of its arguments, in one message.`
    yield* (yield* ThoughtLog).post({
      kind: "tool_arguments_truncated",
      severity: "error",
      title: `Tool call refused: ${name} (arguments truncated)`,
      description: reason,
      details: failureDetails({}, { recoveredKeys }),
      channelId: turn.channelId,
      guildId: turn.guildId
    })
    const result = toolFailure(reason)
    return yield* historyOutcome({
      name,
      replayedCall: FunctionCall({ ...functionCall, args: undefined }),
      result,
      payload: responsePayload(name, result),
      accumulatedText,
      stickerSelection: undefined,
      durationMs: 0
    })
  })

/** A stop response declared no tools: a call it emits anyway is refused, never dispatched. */
const refuseInStopResponse = (functionCall: FunctionCall, name: string, accumulatedText: string) =>
  Effect.gen(function*() {
    yield* Effect.logWarning(`Refused tool call '${name}' in a stop response: it only acknowledges the /kill`)
    const result = toolFailure(
      `Tool "${name}" was not run: this reply only acknowledges that the user stopped the previous one with /kill. ` +
        `Nothing was executed; do not call tools in it.`
    )
    return yield* historyOutcome({
      name,
      replayedCall: functionCall,
      result,
      payload: responsePayload(name, result),
      accumulatedText,
      stickerSelection: undefined,
      durationMs: 0
    })
  })

/** Step 11: the chosen sticker from the guild's catalog; null when the pick failed or is unknown. */
const selectedSticker = (turn: TurnContextShape, result: ToolResult) =>
  Effect.gen(function*() {
    if (!result.success) return null
    const data = result.data
    const rawId = typeof data === "object" && data !== null && "sticker_id" in data ? data.sticker_id : undefined
    const stickerId = typeof rawId === "string" ? rawId.trim() : typeof rawId === "number" ? String(rawId) : ""
    if (stickerId.length === 0) return null
    const found = yield* (yield* StickerCatalog).lookup(turn.guildId, stickerId)
    return Option.getOrNull(found) satisfies Sticker | null
  })

/** Steps 12–14: the history entry (response named as the model sent it) and the outcome. */
const historyOutcome = (input: {
  readonly name: string
  readonly replayedCall: FunctionCall
  readonly result: ToolResult
  readonly payload: unknown
  readonly accumulatedText: string
  readonly stickerSelection: Sticker | null | undefined
  readonly durationMs: number
}) =>
  Effect.gen(function*() {
    const { name, replayedCall, result } = input
    const preToolCallTextParts = preToolTextParts(input.accumulatedText)
    if (preToolCallTextParts !== undefined) {
      yield* Effect.logInfo(`Keeping ${input.accumulatedText.length} characters of pre-tool text with the '${name}' call`)
    }
    const success = result.success === true
    const historyEntry = ToolHistoryEntry({
      functionCall: replayedCall,
      functionResponse: { name: replayedCall.name, response: { result: input.payload } },
      ...(result.imageMetadata === undefined ? {} : { imageMetadata: result.imageMetadata }),
      ...(preToolCallTextParts === undefined ? {} : { preToolCallTextParts })
    })
    return ToolCallOutcome.History({
      functionName: name,
      success,
      endTurn: result.endTurn === true,
      responseDelivered: success && result.responseDelivered === true,
      stickerSelection: input.stickerSelection,
      historyEntry,
      durationMs: input.durationMs
    })
  })
