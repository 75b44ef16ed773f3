import { Cause, Effect, Option } from "effect"
import { ResponseSink } from "./ResponseSink"
import { UserNotice } from "./UserNotice"
import type { PassResult, ThoughtLogPayload, TurnStatus } from "../domain/PassResult"
import type { Sticker } from "../domain/Sticker"
import { addUsage, type TokenUsage } from "../domain/TokenUsage"
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { AttemptRecord, ToolCallRecord, TurnResult } from "../domain/TurnResult"
import { LanguageModel } from "../provider/LanguageModel"
import { mergeContextReports } from "../domain/ContextReport"
import { type AttemptInfo, personalVariant } from "./AttemptInfo"
import { endedOnOverflow, nextLargerWindow } from "./context/overflowFallback"
import { CurrentTurn } from "./CurrentTurn"
import { makeDraftTurn } from "./drafting/DraftState"
import { draftingHooks } from "./drafting/draftingHooks"
import type { ImpersonationAbortedError } from "./ImpersonationAbortedError"
import { type KeyPool, MAX_KEY_ATTEMPTS } from "./KeyPool"
import { type FailureClass, failureClassOf, failureClassText } from "./FailureClass"
import { type AttemptFailure, attemptFailure } from "./policy"
import { RoutePlan } from "./RoutePlan"
import { runToolLoopDetailed, type ToolLoopOutcome, type ToolLoopServices } from "./runToolLoop"
import { ThoughtLog } from "./ThoughtLog"
import { type AttemptSlot, type TurnRoutes, withTurnRoutes } from "./turnRoutes"
import { TurnSignals } from "./TurnSignals"

export type GenerationTurnServices = ToolLoopServices | RoutePlan | KeyPool

/** Failure details for the thought log are whitespace-collapsed and capped. */
const FAILURE_DETAIL_MAX = 600

const collapse = (text: string) => text.replace(/\s+/g, " ").trim().slice(0, FAILURE_DETAIL_MAX)

/** What a replacement attempt inherits from the failed ones. */
interface Carry {
  readonly prefill: string
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  readonly toolResponseDelivered: boolean
  readonly stickerSelection: Sticker | null | undefined
}

/** One finished attempt, for the report and the aggregate. */
interface Finished {
  readonly model: string
  readonly keyIndex: number
  readonly info: AttemptInfo
  readonly outcome: ToolLoopOutcome
}

const lastPass = (outcome: ToolLoopOutcome): PassResult | undefined => outcome.result.passes[outcome.result.passes.length - 1]

/** What the channel is told about a failed attempt (a class), and what only operators see (the detail). */
const describeFailure = (failure: AttemptFailure, last: PassResult | undefined): { readonly reason: FailureClass; readonly detail: string } => {
  if (last?._tag === "Error") return { reason: failureClassOf(last.error.reason), detail: collapse(last.error.message) }
  if (failure === "StreamTimeout" && last?._tag === "Timeout") {
    const reason: FailureClass = last.phase === "first_token" ? "no_first_token" : "stream_stalled"
    return { reason, detail: failureClassText[reason] }
  }
  return { reason: "malformed_tool_call", detail: failureClassText.malformed_tool_call }
}

/**
 * The outer tier: tries the primary model, then each fallback;
 * per model up to 3 keys of the route's rotation. Only a provider `error` rotates the key (and
 * rests it), never a refusal for length (that goes on only to a model with a larger window); a
 * stream timeout or a malformed call goes to the next model. Text a failed attempt
 * delivered stays: the next attempt continues it (prefill) with its tool history, so nothing
 * the user saw is deleted, repeated or redone. The attempts come from the route layer
 * (`turnRoutes`): the planned models on the turn's first route, then, once, the server route's.
 * Never fails except under user impersonation.
 */
const runAttempts = Effect.fn("runGenerationTurn.attempts")(function*(routes: TurnRoutes): Effect.fn.Return<
  TurnResult,
  ImpersonationAbortedError,
  GenerationTurnServices
> {
  const turn = yield* CurrentTurn
  const signals = yield* TurnSignals
  const sink = yield* ResponseSink
  const provider = (yield* LanguageModel).name
  const surfaced = turn.shouldSurfaceUserErrors && !turn.isUserImpersonation

  const finished: Array<Finished> = []
  const thoughtLog = yield* ThoughtLog
  const failures: Array<{ readonly model: string; readonly reason: FailureClass }> = []
  let carry: Carry = { prefill: "", functionHistory: [], toolResponseDelivered: false, stickerSelection: undefined }
  // Response Drafting joins each attempt as loop hooks, with one review state for every attempt
  // of the turn (unused when off).
  const hooks = draftingHooks(yield* makeDraftTurn)
  // The latest stream-timeout notice an attempt kept quiet because another attempt was pending.
  let deferredTimeout: UserNotice | undefined

  const report = (status: TurnStatus, extra: { readonly defect?: boolean } = {}): TurnResult => {
    const outcomes = finished.map((attempt) => attempt.outcome)
    const final = outcomes[outcomes.length - 1]
    const thoughtLog = outcomes.reduce<ThoughtLogPayload | undefined>((latest, o) => o.result.thoughtLog ?? latest, undefined)
    const context = mergeContextReports(outcomes.map((o) => o.result.context))
    const sticker = final?.stickerSelection ?? carry.stickerSelection
    const attempts: Array<AttemptRecord> = finished.map((attempt) => ({
      model: attempt.model,
      keyIndex: attempt.keyIndex,
      status: attempt.outcome.result.status
    }))
    return {
      status,
      text: extra.defect === true ? "" : final?.result.text ?? "",
      iterations: outcomes.reduce((total, o) => total + o.result.passes.length, 0),
      attempts,
      toolCalls: outcomes.flatMap((o): ReadonlyArray<ToolCallRecord> => o.result.toolCalls),
      usage: outcomes.reduce<TokenUsage | undefined>((total, o) => addUsage(total, o.result.usage), undefined),
      toolResponseDelivered: outcomes.some((o) => o.result.toolResponseDelivered),
      ...(thoughtLog === undefined ? {} : { thoughtLog }),
      // Only a completed reply carries its sticker.
      ...(status !== "completed" || sticker === undefined || sticker === null ? {} : { stickerSelection: sticker }),
      ...(final?.result.reason === undefined ? {} : { reason: final.result.reason }),
      ...(context === undefined ? {} : { context })
    }
  }

  const slots: Array<AttemptSlot> = [...routes.planned]
  for (let modelIndex = 0; modelIndex < slots.length; modelIndex++) {
    const slot = slots[modelIndex]
    if (slot === undefined) break
    const { model, route } = slot
    const lastModel = modelIndex === slots.length - 1 && !(yield* routes.mayExtend)
    const tried = new Set<number>()
    let current: Finished | undefined
    let failure: AttemptFailure = "Terminal"

    while (true) {
      const next = yield* route.keys.next(tried)
      if (Option.isNone(next)) break
      const keyIndex = next.value
      tried.add(keyIndex)
      const hasFallbackKey = tried.size < MAX_KEY_ATTEMPTS && (yield* route.keys.hasAnother(tried))
      const info: AttemptInfo = {
        provider,
        model,
        suppressUserErrors: hasFallbackKey || !lastModel || !turn.shouldSurfaceUserErrors,
        credentialSource: route.source
      }

      yield* Effect.logDebug("generation attempt starts").pipe(
        Effect.annotateLogs({ model, keyIndex, suppressUserErrors: info.suppressUserErrors, continues: carry.prefill.length > 0 })
      )
      const run = yield* runToolLoopDetailed({
        attempt: info,
        apiKey: route.keys.key(keyIndex),
        functionHistory: carry.functionHistory,
        prefill: carry.prefill,
        toolResponseDelivered: carry.toolResponseDelivered,
        ...(carry.stickerSelection === undefined ? {} : { stickerSelection: carry.stickerSelection }),
        hooks
      }).pipe(
        Effect.annotateLogs({ model, keyIndex }),
        Effect.map((outcome) => ({ _tag: "Ran" as const, outcome })),
        Effect.catchDefect((defect) => Effect.succeed({ _tag: "Defect" as const, defect }))
      )
      if (run._tag === "Defect") {
        // A bug inside an attempt: status `error`, and no further fallback.
        yield* Effect.logError("generation attempt failed with a defect", Cause.die(run.defect))
        finished.push({
          model,
          keyIndex,
          info,
          outcome: {
            result: { status: "error", text: "", passes: [], toolCalls: [], usage: undefined, toolResponseDelivered: false },
            unansweredText: carry.prefill,
            functionHistory: carry.functionHistory,
            stickerSelection: carry.stickerSelection
          }
        })
        // Under impersonation the failure belongs to the front that impersonated.
        if (turn.isUserImpersonation) return yield* Effect.die(run.defect)
        if (surfaced) yield* sink.notice(UserNotice.ProviderFailed({ model, reason: "internal_error" }))
        return report("error", { defect: true })
      }

      current = { model, keyIndex, info, outcome: run.outcome }
      finished.push(current)
      const last = lastPass(run.outcome)
      failure = attemptFailure(run.outcome.result.status, last)
      if (failure !== "Terminal") {
        carry = {
          prefill: run.outcome.unansweredText,
          functionHistory: run.outcome.functionHistory,
          toolResponseDelivered: carry.toolResponseDelivered || run.outcome.result.toolResponseDelivered,
          stickerSelection: run.outcome.stickerSelection
        }
      }
      if (last?._tag === "Timeout" && info.suppressUserErrors) {
        deferredTimeout = UserNotice.StreamTimeout({ provider, phase: last.phase, ...personalVariant(info) })
      }
      // A request too long for the window says nothing about the key: it is never rested or rotated.
      if (failure === "ProviderError" && last?._tag === "Error" && !endedOnOverflow(last)) {
        yield* route.keys.recordError(keyIndex, last.error)
        if (hasFallbackKey) continue
      } else if (run.outcome.result.status !== "timeout") {
        yield* route.keys.recordSuccess(keyIndex)
      }
      break
    }

    if (current === undefined) continue
    const last = lastPass(current.outcome)
    if (failure !== "Terminal") {
      // The vendor's words (hosts, addresses, error text) are for operators only.
      const { detail, reason } = describeFailure(failure, last)
      yield* thoughtLog.post({
        kind: "provider_failed",
        severity: "error",
        title: `Model ${model} failed: ${failureClassText[reason]}`,
        description: detail,
        channelId: turn.channelId,
        guildId: turn.guildId
      })
      // Route layer: after the last attempt failed retryably, the server route may follow.
      if (modelIndex === slots.length - 1) slots.push(...(yield* routes.extend))
      // Too long for this model: only a later model with a larger window is worth asking.
      if (endedOnOverflow(last) && modelIndex < slots.length - 1) {
        const next = yield* nextLargerWindow(slots.map((candidate) => candidate.model), modelIndex)
        slots.splice(modelIndex + 1, (next ?? slots.length) - modelIndex - 1)
      }
      if (modelIndex < slots.length - 1) {
        failures.push({ model, reason })
        continue
      }
    }

    // Finalize: the answer (or the last failure) of this attempt is the turn's.
    const status = current.outcome.result.status
    if (status === "completed" && modelIndex > 0) {
      const pending = yield* signals.current
      if (Option.isSome(pending)) {
        // The user already moved on (stop / new message): no fallback notice, the request is spent.
        yield* pending.value._tag === "Stop" ? signals.clearStop : signals.clearFollowUp
      } else if (surfaced) {
        yield* sink.notice(UserNotice.FallbackUsed({ model, failures }))
      }
    }
    if (surfaced && (status === "timeout" || status === "error") && deferredTimeout !== undefined && last?._tag !== "DeliveryFailed") {
      const shownByFinal = last?._tag === "Timeout" && !current.info.suppressUserErrors
      if (!shownByFinal) yield* sink.notice(deferredTimeout)
    }
    if (surfaced && status === "error" && last?._tag === "Error") {
      yield* sink.notice(UserNotice.ProviderFailed({ model, reason: failureClassOf(last.error.reason) }))
    }
    return report(status)
  }

  // No model to try at all (an empty plan): defensive, as in the reference.
  return report("skipped")
})

/** The outer tier over the turn's credential routes (admission settled, usage recorded: `withTurnRoutes`). */
export const runGenerationTurn = Effect.fn("runGenerationTurn")(function*(): Effect.fn.Return<
  TurnResult,
  ImpersonationAbortedError,
  GenerationTurnServices
> {
  return yield* withTurnRoutes(runAttempts)
})
