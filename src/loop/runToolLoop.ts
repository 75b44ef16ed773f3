import { Effect, Option, Ref } from "effect"
import { type DeliveryError, ResponseSink } from "./ResponseSink"
import { makeQuietSink } from "./quietSink"
import { UserNotice } from "./UserNotice"
import { LoopConfig } from "../config/LoopConfig"
import type { ContextReport } from "../domain/ContextReport"
import type { PassResult, TurnStatus } from "../domain/PassResult"
import type { AttemptResult } from "../domain/TurnResult"
import type { LanguageModel } from "../provider/LanguageModel"
import { passPolicyFor } from "../provider/passPolicies"
import { ToolRegistry } from "../tools/ToolRegistry"
import { buildResult, withHookOutcome } from "./buildResult"
import { makeContextBudget } from "./context/ContextBudget"
import { CurrentTurn } from "./CurrentTurn"
import type { ExecuteToolCallServices } from "./executeToolCall"
import { foldPassCalls, type PassCallsFold } from "./foldPassCalls"
import { ImpersonationAbortedError } from "./ImpersonationAbortedError"
import { noHooks, type PassFate } from "./LoopHooks"
import { batchOffset, forRevision, initialLoopState, type LoopState, outcomeOf, resultInput, type ToolLoopInput, type ToolLoopOutcome, withBatch, withoutReplyExtras, withPass } from "./LoopState"
import { passRequest } from "./passRequest"
import { runPassCalls } from "./runPassCalls"
import { StopResponses } from "./StopResponses"
import { contextRestarted, endsAfterPreToolText, endTurnRequested, errorCapReached, fallbackReplyComplete, mayTrySettle, refusedPrefill } from "./stopConditions"
import { streamOnce } from "./streamOnce"
import { ThoughtLog } from "./ThoughtLog"
import { TurnSignals } from "./TurnSignals"

export type { ToolLoopOutcome } from "./LoopState"
export { continuationInstruction } from "./passRequest"

export type ToolLoopServices = ExecuteToolCallServices | LanguageModel | StopResponses

const isBlank = (text: string) => text.trim().length === 0

const withContext = (result: AttemptResult, context: ContextReport | undefined): AttemptResult =>
  context === undefined || context.window === null ? result : { ...result, context }

/** What a pass decided: the attempt's outcome, or `undefined` to run the next pass. */
type Step = ToolLoopOutcome | undefined

/**
 * The inner tier: one generation attempt (one model × one key). Streams a pass, runs its tool
 * calls, and goes round until the model answers, a stop or follow-up arrives, a provider fails,
 * or a stop condition (stopConditions.ts) ends it. Features join through the attempt's hooks and
 * the provider's pass policy (docs/architecture.md, "Loop core and its hooks").
 */
export const runToolLoopDetailed = Effect.fn("runToolLoop")(function*(
  input: ToolLoopInput
): Effect.fn.Return<ToolLoopOutcome, ImpersonationAbortedError, ToolLoopServices> {
  const config = yield* LoopConfig
  const turn = yield* CurrentTurn
  const registry = yield* ToolRegistry
  const sink = yield* ResponseSink
  const signals = yield* TurnSignals
  const stopResponses = yield* StopResponses
  const thoughtLog = yield* ThoughtLog
  const { attempt } = input

  const state = yield* Ref.make<LoopState>(initialLoopState(input))
  const firstBatch = batchOffset(input) + 1
  const hooks = input.hooks === undefined ? noHooks : yield* input.hooks(attempt, input.apiKey)
  const policy = passPolicyFor(attempt.provider)
  // Every request is fitted to the model's context window (docs/architecture.md, "Context budget").
  const budget = yield* makeContextBudget(attempt)
  const nextRequest = passRequest({ state, attempt, apiKey: input.apiKey, hooks })

  const finish = (status: TurnStatus, responseText: string, refused?: DeliveryError) =>
    Effect.map(Effect.all([Ref.get(state), hooks.usage, budget.report]), ([s, spent, context]) => {
      // Held output: scene metadata only with a reply.
      const details = hooks.holdsOutput && isBlank(responseText) ? "" : s.detailsText
      const result = withHookOutcome(buildResult(resultInput(s, status, responseText, details)), spent, refused !== undefined)
      return outcomeOf(s, withContext(result, context))
    })

  /** A stop that carries a context gets its answer queued first; otherwise it is cleared. */
  const queueStopResponseIfPresent = Effect.flatMap(signals.takeStopContext, (stop) =>
    Option.match(stop, { onNone: () => signals.clearStop, onSome: stopResponses.queue }))

  /** Ends the turn with an answer, which a hook may still send back to be written again (`undefined`). */
  const conclude = (status: TurnStatus, responseText: string) =>
    Effect.gen(function*() {
      const s = yield* Ref.get(state)
      const decided = yield* hooks.conclude({ status, responseText, functionHistory: s.functionHistory, queueStopResponse: queueStopResponseIfPresent })
      if (decided._tag === "Finished") return yield* finish(decided.status, decided.text, decided.deliveryFailed)
      yield* Ref.update(state, forRevision)
      return undefined
    })

  /** Ends the turn without an answer; what the pass showed is where a replacement continues (nothing, if it was held). */
  const endWithout = (status: TurnStatus, pass: PassResult, passText: string, fate: PassFate) =>
    Effect.gen(function*() {
      yield* hooks.passEnded(pass.accumulatedText, fate)
      if (hooks.holdsOutput) return yield* finish(status, "")
      yield* Ref.update(state, (s) => ({ ...s, carried: passText }))
      return yield* finish(status, passText)
    })

  const errorCapEnd = (fold: PassCallsFold) =>
    Effect.gen(function*() {
      const failures = fold.consecutiveToolErrors
      const lastTool = fold.lastFailedName ?? ""
      yield* Effect.logWarning(`${failures} consecutive tool failures: ending the turn`).pipe(
        Effect.annotateLogs({ lastTool, channelId: turn.channelId })
      )
      if (turn.isUserImpersonation) return yield* new ImpersonationAbortedError({ failures, lastTool })
      if (turn.shouldSurfaceUserErrors) yield* sink.notice(UserNotice.ToolErrorLoop({ failures, lastTool }))
      return yield* finish("error", "")
    })

  /** The calls of a pass, run together and folded in the model's order (docs/architecture.md, "Tool calls of one pass"). */
  const afterCalls = (pass: Extract<PassResult, { _tag: "FunctionCall" }>, passText: string, withheld: string, iteration: number) =>
    Effect.gen(function*() {
      // The model continued `carried` and then called: the whole text precedes the calls.
      const outcomes = yield* hooks.aroundCalls(runPassCalls({ calls: pass.calls, preToolText: passText, iteration, attempt }))
      const preToolText = pass.accumulatedText + withheld
      const before = yield* Ref.get(state)
      const fold = foldPassCalls(outcomes, {
        batch: firstBatch + iteration,
        preToolText: passText,
        consecutiveToolErrors: before.consecutiveToolErrors,
        failuresAfterText: before.failuresAfterText,
        afterText: policy.countsFailuresAfterText(preToolText)
      })
      yield* Ref.update(state, (s) => ({ ...s, toolCalls: [...s.toolCalls, ...fold.records] }))
      if (fold.abort !== undefined) {
        if (fold.abort === "stopped_by_user") yield* queueStopResponseIfPresent
        return yield* endWithout(fold.abort, pass, passText, fold.abort === "stopped_by_user" ? "discarded" : "dropped")
      }
      yield* hooks.passEnded(pass.accumulatedText, "kept")
      const after = yield* Ref.updateAndGet(state, (s) => withBatch(s, fold, passText))

      // A stop response's call was refused, and it has no second pass: what it said is the answer.
      if (turn.isStopResponse) return yield* finish(isBlank(passText) ? "empty_response" : "completed", passText)
      if (errorCapReached(fold, config.maxConsecutiveToolErrors)) return yield* errorCapEnd(fold)
      if (endTurnRequested(fold)) return yield* conclude("completed", passText)
      if (contextRestarted(fold)) return undefined
      const verdict = yield* policy.afterCalls({ preToolText, passText, lastDelivered: after.lastDelivered, fold, provider: attempt.provider })
      if (verdict._tag === "Retry") return undefined
      if (verdict._tag === "Conclude") return yield* conclude("completed", verdict.text)
      if (endsAfterPreToolText(fold, passText)) return yield* conclude("completed", passText)
      return undefined
    })

  const afterEmpty = (pass: Extract<PassResult, { _tag: "EmptyResponse" }>) =>
    Effect.gen(function*() {
      const s = yield* Ref.get(state)
      const delivered = s.lastDelivered
      if ((delivered !== undefined || s.toolResponseDelivered) && mayTrySettle(pass, s.lastToolName)) {
        const needsFollowUp = yield* registry.requiresFollowUp(s.lastToolName, attempt.provider, turn.guildId, turn.state)
        if (!needsFollowUp) return yield* conclude("completed", delivered ?? "")
      }
      if (fallbackReplyComplete(pass, s.carriedFromFallback)) return yield* conclude("completed", s.carried)
      return yield* finish("empty_response", "")
    })

  // A stop response gets one pass: its only job is the acknowledgement.
  const maxIterations = turn.isStopResponse ? 1 : config.maxIterations
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    if (iteration === config.softWarnIteration && turn.shouldSurfaceUserErrors) {
      yield* sink.notice(UserNotice.StillWorking({ iteration }))
    }

    const built = yield* nextRequest
    const request = yield* budget.fit(built.request)
    const passSink = hooks.passSink(sink)
    // A pass policy may withhold a pass's text (it repeats what was posted).
    const quiet = policy.withholdsText(yield* Ref.get(turn.state.flags)) ? yield* makeQuietSink(passSink) : undefined
    const target = quiet?.sink ?? passSink
    const run = streamOnce({ request, attempt, continuing: built.continuing })
    const pass = yield* (target === sink ? run : Effect.provideService(run, ResponseSink, target))
    const withheld = quiet === undefined ? "" : yield* quiet.withheld
    const before = yield* Ref.updateAndGet(state, (s) => withPass(s, pass))
    // Refused as too long for the window: the same pass again, smaller (at most twice).
    if ((yield* budget.afterPass(pass)) === "retry") continue
    if (before.continuation === "prefill" && refusedPrefill(pass, request)) {
      yield* Effect.logWarning("the server refused the reply prefill; retrying the pass once with an instruction naming the posted text").pipe(
        Effect.annotateLogs({ model: attempt.model, detail: pass._tag === "Error" ? pass.error.detail : "" })
      )
      yield* Ref.update(state, (s) => ({ ...s, continuation: "instruction" as const }))
      continue
    }
    // Everything the user saw since the last history entry, this pass included.
    const passText = before.carried + pass.accumulatedText
    if (!isBlank(pass.accumulatedText)) yield* Ref.update(state, (s) => ({ ...s, lastDelivered: passText }))

    let step: Step
    switch (pass._tag) {
      case "Completed":
        yield* hooks.passEnded(pass.accumulatedText, "kept")
        step = yield* conclude("completed", passText)
        break
      case "DeliveryFailed":
        // Nothing more reaches the user; the operator hears of it.
        yield* thoughtLog.post({
          kind: "delivery_failed",
          severity: "error",
          title: "Reply not delivered",
          description: `The destination refused the reply (${pass.error.reason}); the turn ended as delivery_failed. ${pass.error.detail}`,
          channelId: turn.channelId,
          guildId: turn.guildId
        })
        step = yield* finish("error", passText)
        break
      case "Error":
      case "Timeout":
        // Retryable for the outer tier; a replacement continues from the text shown so far.
        step = yield* endWithout(pass._tag === "Error" ? "error" : "timeout", pass, passText, "dropped")
        break
      case "StoppedByUser":
        yield* queueStopResponseIfPresent
        step = yield* endWithout("stopped_by_user", pass, passText, "discarded")
        break
      case "FollowUpInterrupt":
        step = yield* endWithout("follow_up_interrupt", pass, passText, "discarded")
        break
      case "EmptyResponse":
        step = yield* afterEmpty(pass)
        break
      case "FunctionCall":
        step = yield* afterCalls(pass, passText, withheld, iteration)
        break
    }
    if (step !== undefined) return step
  }

  // The iteration cap: never a silent empty answer.
  yield* Effect.logWarning(`tool loop reached ${config.maxIterations} iterations: ending the turn`).pipe(
    Effect.annotateLogs({ channelId: turn.channelId, model: attempt.model })
  )
  if (turn.shouldSurfaceUserErrors) yield* sink.notice(UserNotice.MaxIterations({ iterations: config.maxIterations }))
  yield* Ref.update(state, withoutReplyExtras)
  return yield* finish("timeout", "")
})

/** runToolLoop as the contract shows it: one attempt's AttemptResult. */
export const runToolLoop = (input: ToolLoopInput) => Effect.map(runToolLoopDetailed(input), (outcome) => outcome.result)
