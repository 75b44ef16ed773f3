import { Effect, Option, type Redacted, Ref } from "effect"
import { type DeliveryError, ResponseSink } from "./ResponseSink"
import { makeQuietSink } from "./quietSink"
import { UserNotice } from "./UserNotice"
import { LoopConfig } from "../config/LoopConfig"
import type { PassResult, ThoughtLogPayload, TurnStatus } from "../domain/PassResult"
import type { Sticker } from "../domain/Sticker"
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { ContextReport } from "../domain/ContextReport"
import type { AttemptResult, ToolCallRecord } from "../domain/TurnResult"
import type { GenerationRequest } from "../provider/GenerationRequest"
import type { LanguageModel } from "../provider/LanguageModel"
import { applyDeliberateAllowlist } from "../tools/deliberate/planDeliberateToolMode"
import { setFlag } from "../tools/TurnState"
import { toDeclaration } from "../tools/Tool"
import { ToolRegistry } from "../tools/ToolRegistry"
import type { AttemptInfo } from "./AttemptInfo"
import { buildResult, mergeDetails } from "./buildResult"
import { CurrentTurn } from "./CurrentTurn"
import type { ExecuteToolCallServices } from "./executeToolCall"
import { foldPassCalls } from "./foldPassCalls"
import { ImpersonationAbortedError } from "./ImpersonationAbortedError"
import { isNovelAiPreToolText, mayTrySettle, novelAiRetryExhausted, shouldEndAfterPreToolText } from "./policy"
import { StopResponses } from "./StopResponses"
import { ThoughtLog } from "./ThoughtLog"
import { makeContextBudget } from "./context/ContextBudget"
import { runPassCalls } from "./runPassCalls"
import { streamOnce } from "./streamOnce"
import { TurnSignals } from "./TurnSignals"
import { authorNotes } from "./drafting/authorNotes"
import { completeResponse } from "./drafting/completeResponse"
import { DraftReview, type DraftTurn } from "./drafting/DraftState"
import { discardPending, dropProse, holdingSink, keepProse } from "./drafting/holdingSink"
import { startDraftAttempt } from "./drafting/startDraftAttempt"
import { withReview, withoutPreToolText } from "./drafting/withReview"

export interface ToolLoopInput {
  readonly attempt: AttemptInfo
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** Tool history of earlier, failed attempts of this turn: those tools never run twice. */
  readonly functionHistory?: ReadonlyArray<ToolHistoryEntry>
  /**
   * Reply text an earlier attempt already delivered after its last tool call (design §2
   * decision 4): the model is given it as the start of its answer and continues it.
   */
  readonly prefill?: string
  /** An earlier attempt of this turn already delivered a tool response (spec §2.1). */
  readonly toolResponseDelivered?: boolean
  /** The sticker chosen by an earlier attempt (`null`: chosen then cleared). */
  readonly stickerSelection?: Sticker | null
  /** Response Drafting: the turn's review state, shared by its attempts (spec §2.10; ignored when off). */
  readonly draft?: DraftTurn
}

/** runToolLoop's result plus what the outer tier needs to continue after a failed attempt. */
export interface ToolLoopOutcome {
  readonly result: AttemptResult
  /** Raw text delivered after the last tool history entry: the prefill of a replacement attempt. */
  readonly unansweredText: string
  /** Every history entry, inherited ones first. */
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  readonly stickerSelection: Sticker | null | undefined
}

export type ToolLoopServices = ExecuteToolCallServices | LanguageModel | StopResponses

/** The loop state of spec §2.1 (text accounting adapted to fallback continuation). */
interface LoopState {
  readonly passes: ReadonlyArray<PassResult>
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  readonly toolCalls: ReadonlyArray<ToolCallRecord>
  /**
   * Text delivered since the last history entry that the model must continue from: the
   * fallback prefill, plus pre-tool text of a pass whose call restarted the context (that text
   * is on no history entry, so it stays the start of the answer, like the reference's
   * accumulated model parts).
   */
  readonly carried: string
  /** `carried` came from an earlier attempt and no tool ran since. */
  readonly carriedFromFallback: boolean
  /** Latest non-blank text the user saw (what an empty follow-up settles on). */
  readonly lastDelivered: string | undefined
  readonly consecutiveToolErrors: number
  readonly lastToolName: string | undefined
  readonly toolResponseDelivered: boolean
  readonly thoughtLog: ThoughtLogPayload | undefined
  readonly stickerSelection: Sticker | null | undefined
  /**
   * How `carried` reaches the model: as the start of its answer (a trailing assistant message),
   * or, once a server refused that shape, as an instruction naming what was already posted.
   */
  readonly continuation: "prefill" | "instruction"
  /** NovelAI scene metadata merged over the passes (spec §2.1 `detailsText`, §2.9). */
  readonly detailsText: string
  /** NovelAI tool failures after pre-tool text in a row (spec §2.1 `naiConsecutiveToolFailures`). */
  readonly naiToolFailures: number
}

/** The note that replaces a refused reply prefill: what was posted, and to go on from there. */
export const continuationInstruction = (posted: string): string =>
  "[Your reply was interrupted after you had already posted the text between the markers below. " +
  "Continue right after its last word; do not repeat any of it and do not start over.]\n<<<\n" + posted + "\n>>>"

/**
 * A server that refuses a trailing assistant message (llama.cpp in thinking mode answers HTTP
 * 400; others refuse any prefill) fails the pass before it shows anything: that is the shape,
 * not the conversation, so the pass is retried once with the instruction instead.
 */
const refusedPrefill = (pass: PassResult, request: GenerationRequest): boolean =>
  pass._tag === "Error" && pass.error.reason === "BadRequest" && request.assistantPrefill !== undefined && isBlank(pass.accumulatedText)

const isBlank = (text: string) => text.trim().length === 0

const withContext = (result: AttemptResult, context: ContextReport | undefined): AttemptResult =>
  context === undefined || context.window === null ? result : { ...result, context }

/**
 * The inner tier (spec §2): one generation attempt (one model × one key). Streams a pass,
 * dispatches its tool call, and goes round until the model answers, a stop or follow-up
 * arrives, a provider fails, or a guard (iteration cap, consecutive tool errors) ends it.
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

  const prefill = input.prefill ?? ""
  // Passes are numbered across the turn's attempts: an inherited batch never merges with a new one.
  const batchOffset = (input.functionHistory ?? []).reduce((most, entry) => Math.max(most, entry.batch ?? 0), 0)
  const state = yield* Ref.make<LoopState>({
    passes: [],
    functionHistory: input.functionHistory ?? [],
    toolCalls: [],
    carried: prefill,
    carriedFromFallback: !isBlank(prefill),
    lastDelivered: isBlank(prefill) ? undefined : prefill,
    consecutiveToolErrors: 0,
    lastToolName: undefined,
    toolResponseDelivered: input.toolResponseDelivered ?? false,
    thoughtLog: undefined,
    stickerSelection: input.stickerSelection,
    continuation: "prefill",
    detailsText: "",
    naiToolFailures: 0
  })

  // Response Drafting (spec §2.10): prose is held and reviewed before delivery; undefined when off.
  const draft = yield* startDraftAttempt({ turn: input.draft, attempt, apiKey: input.apiKey })
  const reviewUsage = draft === undefined ? Effect.succeed(undefined) : Ref.get(draft.usage)
  // Every request is fitted to the model's context window (docs/architecture.md, "Context budget").
  const budget = yield* makeContextBudget(attempt)

  const finish = (status: TurnStatus, responseText: string, refused?: DeliveryError) =>
    Effect.map(Effect.all([Ref.get(state), reviewUsage, budget.report]), ([s, reviewed, context]): ToolLoopOutcome => ({
      result: withContext(withReview(buildResult({
        status,
        responseText,
        // Review mode: scene metadata only with a reply (spec §2.9).
        details: draft !== undefined && isBlank(responseText) ? "" : s.detailsText,
        passes: s.passes,
        toolCalls: s.toolCalls,
        toolResponseDelivered: s.toolResponseDelivered,
        thoughtLog: s.thoughtLog,
        stickerSelection: s.stickerSelection
      }), reviewed, refused), context),
      unansweredText: s.carried,
      functionHistory: s.functionHistory,
      stickerSelection: s.stickerSelection
    }))

  /** Spec §2.8: a stop that carries a context gets its answer queued first; otherwise it is cleared. */
  const queueStopResponseIfPresent = Effect.flatMap(signals.takeStopContext, (stop) =>
    Option.match(stop, { onNone: () => signals.clearStop, onSome: stopResponses.queue }))

  const buildRequest = Effect.gen(function*() {
    const s = yield* Ref.get(state)
    // A stop response declares nothing (design decision 15); dispatch refuses a call anyway.
    const tools = turn.isStopResponse ? [] : yield* registry.toolsForTurn({
      provider: attempt.provider,
      model: attempt.model,
      guildId: turn.guildId,
      channelId: turn.channelId,
      flags: yield* Ref.get(turn.state.flags),
      turnState: turn.state
    })
    const messages = [...(yield* Ref.get(turn.state.contextItems)), ...(draft === undefined ? [] : yield* authorNotes(draft.turn))]
    const continues = !isBlank(s.carried)
    const asInstruction = continues && s.continuation === "instruction"
    const request: GenerationRequest = {
      model: attempt.model,
      apiKey: input.apiKey,
      system: turn.persona.systemPrompt,
      messages: asInstruction ? [...messages, { role: "user", content: continuationInstruction(s.carried) }] : messages,
      // Deliberate mode declares only what the message asked for (dispatch re-checks it).
      tools: applyDeliberateAllowlist(tools, turn.deliberate).map(toDeclaration),
      functionHistory: s.functionHistory,
      ...(continues && !asInstruction ? { assistantPrefill: s.carried } : {})
    }
    return { request, continuing: s.carried }
  })

  /**
   * Ends the turn with an answer. Response Drafting (spec §2.10): the pending reply is reviewed
   * and delivered first; `undefined` means the reviewer asked for a revision and the loop goes
   * on, with the pending reply and carried text cleared and the tool outcomes kept.
   */
  const conclude = (status: TurnStatus, responseText: string) =>
    Effect.gen(function*() {
      if (draft === undefined) return yield* finish(status, responseText)
      const completion = yield* completeResponse({
        draft,
        status,
        responseText,
        functionHistory: (yield* Ref.get(state)).functionHistory,
        sink,
        queueStopResponse: queueStopResponseIfPresent
      })
      if (completion._tag === "Finished") return yield* finish(completion.status, completion.text, completion.deliveryFailed)
      yield* Ref.update(state, (s) => ({
        ...s,
        carried: "",
        carriedFromFallback: false,
        lastDelivered: undefined,
        detailsText: "",
        // The draft's narration was never shown: the model must not believe it said it.
        functionHistory: s.functionHistory.map(withoutPreToolText)
      }))
      return undefined
    })

  /** Response Drafting: a stop or follow-up throws the pending reply away (nothing of it was shown). */
  const discardDraft = draft === undefined ? Effect.void : discardPending(draft.turn)

  // A stop response gets one pass: its only job is the acknowledgement.
  const maxIterations = turn.isStopResponse ? 1 : config.maxIterations
  for (let iteration = 0; iteration < maxIterations; iteration++) {
    if (iteration === config.softWarnIteration && turn.shouldSurfaceUserErrors) {
      yield* sink.notice(UserNotice.StillWorking({ iteration }))
    }

    const built = yield* buildRequest
    const request = yield* budget.fit(built.request)
    const continuing = built.continuing
    // Response Drafting: the pass writes into the draft, not to the user.
    const passSink = draft === undefined ? sink : holdingSink(draft.turn, sink)
    // NovelAI retry of a failed tool (spec §2.3 step 8): the pass posts nothing; its text is withheld.
    const quiet = (yield* Ref.get(turn.state.flags)).suppressTextOutput ? yield* makeQuietSink(passSink) : undefined
    const run = streamOnce({ request, attempt, continuing })
    const target = quiet?.sink ?? (draft === undefined ? undefined : passSink)
    const pass = yield* (target === undefined ? run : Effect.provideService(run, ResponseSink, target))
    const withheld = quiet === undefined ? "" : yield* quiet.withheld
    const before = yield* Ref.updateAndGet(state, (s) => ({
      ...s,
      passes: [...s.passes, pass],
      thoughtLog: pass.thoughtLog ?? s.thoughtLog,
      // Scene metadata of a completed, stopped or tool-calling pass (spec §2.2, §2.3 step 1).
      detailsText: pass._tag === "Completed" || pass._tag === "StoppedByUser" || pass._tag === "FunctionCall"
        ? mergeDetails(s.detailsText, pass.detailsContent)
        : s.detailsText
    }))
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

    switch (pass._tag) {
      case "Completed": {
        if (draft !== undefined) yield* keepProse(draft.turn, pass.accumulatedText)
        const done = yield* conclude("completed", passText)
        if (done === undefined) continue
        return done
      }

      case "DeliveryFailed":
        // Nothing more reaches the user; the operator hears of it (decision 18).
        yield* thoughtLog.post({
          kind: "delivery_failed",
          severity: "error",
          title: "Reply not delivered",
          description: `The destination refused the reply (${pass.error.reason}); the turn ended as delivery_failed. ${pass.error.detail}`,
          channelId: turn.channelId,
          guildId: turn.guildId
        })
        return yield* finish("error", passText)

      case "Error":
      case "Timeout":
        // Response Drafting: the failed pass showed nothing, so a replacement starts it afresh.
        if (draft !== undefined) {
          yield* dropProse(draft.turn, pass.accumulatedText)
          return yield* finish(pass._tag === "Error" ? "error" : "timeout", "")
        }
        // Retryable for the outer tier; the text shown so far is where a replacement continues.
        yield* Ref.update(state, (s) => ({ ...s, carried: passText }))
        return yield* finish(pass._tag === "Error" ? "error" : "timeout", passText)

      case "StoppedByUser":
        yield* queueStopResponseIfPresent
        if (draft !== undefined) return yield* Effect.zipRight(discardDraft, finish("stopped_by_user", ""))
        yield* Ref.update(state, (s) => ({ ...s, carried: passText }))
        return yield* finish("stopped_by_user", passText)

      case "FollowUpInterrupt":
        if (draft !== undefined) return yield* Effect.zipRight(discardDraft, finish("follow_up_interrupt", ""))
        yield* Ref.update(state, (s) => ({ ...s, carried: passText }))
        return yield* finish("follow_up_interrupt", passText)

      case "EmptyResponse": {
        const s = yield* Ref.get(state)
        const delivered = s.lastDelivered
        if ((delivered !== undefined || s.toolResponseDelivered) && mayTrySettle(pass, s.lastToolName)) {
          const needsFollowUp = yield* registry.requiresFollowUp(s.lastToolName, attempt.provider, turn.guildId, turn.state)
          if (!needsFollowUp) {
            const done = yield* conclude("completed", delivered ?? "")
            if (done === undefined) continue
            return done
          }
        }
        // A replacement attempt with nothing to add: the reply it continued is complete.
        if (s.carriedFromFallback && pass.finishReason !== "length" && pass.emptyResponseReason === undefined) {
          const done = yield* conclude("completed", s.carried)
          if (done === undefined) continue
          return done
        }
        return yield* finish("empty_response", "")
      }

      case "FunctionCall": {
        // Every call of the pass, run together; the outcomes are folded in the model's order
        // once all ended (docs/architecture.md, "Tool calls of one pass"). The model continued
        // `carried` and then called: the whole text precedes the calls.
        const running = runPassCalls({ calls: pass.calls, preToolText: passText, iteration, attempt })
        // Response Drafting: the tool checkpoint finds the reviewer here.
        const outcomes = yield* (draft === undefined ? running : Effect.provideService(running, DraftReview, draft))
        const s0 = yield* Ref.get(state)
        // This pass's pre-tool text, posted or (on a NovelAI retry) withheld.
        const novelAiCase = isNovelAiPreToolText(attempt.provider, pass.accumulatedText + withheld)
        const batch = foldPassCalls(outcomes, {
          batch: batchOffset + iteration + 1,
          preToolText: passText,
          consecutiveToolErrors: s0.consecutiveToolErrors,
          failuresAfterText: s0.naiToolFailures,
          afterText: novelAiCase
        })
        yield* Ref.update(state, (s) => ({ ...s, toolCalls: [...s.toolCalls, ...batch.records] }))

        if (batch.abort !== undefined) {
          if (batch.abort === "stopped_by_user") yield* queueStopResponseIfPresent
          if (draft !== undefined) {
            // Nothing of the draft was shown: a stop discards it, a refused call drops its pass.
            yield* batch.abort === "stopped_by_user" ? discardDraft : dropProse(draft.turn, pass.accumulatedText)
            return yield* finish(batch.abort, "")
          }
          yield* Ref.update(state, (s) => ({ ...s, carried: passText }))
          return yield* finish(batch.abort, passText)
        }
        // Response Drafting: narration before calls that went on joins the pending reply.
        if (draft !== undefined) yield* keepProse(draft.turn, pass.accumulatedText)

        const after = yield* Ref.updateAndGet(state, (s) => ({
          ...s,
          functionHistory: [...s.functionHistory, ...batch.entries],
          // The pre-tool text now lives on the first entry; only a pass whose every call
          // restarted the context keeps carrying it.
          carried: batch.entries.length === 0 ? passText : "",
          carriedFromFallback: false,
          lastToolName: batch.names.at(-1) ?? s.lastToolName,
          toolResponseDelivered: s.toolResponseDelivered || batch.responseDelivered,
          stickerSelection: batch.stickerSelection === undefined ? s.stickerSelection : batch.stickerSelection,
          consecutiveToolErrors: batch.consecutiveToolErrors,
          naiToolFailures: batch.failuresAfterText
        }))

        // A stop response's call was refused, and it has no second pass: what it said is the answer.
        if (turn.isStopResponse) return yield* finish(isBlank(passText) ? "empty_response" : "completed", passText)

        // The error cap is checked before endTurn, on the count after the whole batch.
        if (batch.countedFailure && after.consecutiveToolErrors >= config.maxConsecutiveToolErrors) {
          const lastTool = batch.lastFailedName ?? ""
          yield* Effect.logWarning(`${after.consecutiveToolErrors} consecutive tool failures: ending the turn`).pipe(
            Effect.annotateLogs({ lastTool, channelId: turn.channelId })
          )
          if (turn.isUserImpersonation) {
            return yield* new ImpersonationAbortedError({ failures: after.consecutiveToolErrors, lastTool })
          }
          if (turn.shouldSurfaceUserErrors) {
            yield* sink.notice(UserNotice.ToolErrorLoop({ failures: after.consecutiveToolErrors, lastTool }))
          }
          return yield* finish("error", "")
        }
        if (batch.endTurn) {
          const done = yield* conclude("completed", passText)
          if (done === undefined) continue
          return done
        }
        // A context restart: the next pass sees the enriched context.
        if (batch.restarted) continue

        // NovelAI, spec §2.3 step 8: a tool failed after pre-tool text: retry the pass without
        // re-posting it, and after 3 such failures keep the text shown and end the turn.
        if (batch.countedFailure && novelAiCase) {
          if (novelAiRetryExhausted(after.naiToolFailures)) {
            if (turn.shouldSurfaceUserErrors) {
              yield* sink.notice(UserNotice.NovelAiToolRetryExhausted({ failures: after.naiToolFailures, lastTool: batch.lastFailedName ?? "" }))
            }
            // The retries posted nothing: the answer is the text the user last saw.
            const done = yield* conclude("completed", isBlank(passText) ? after.lastDelivered ?? "" : passText)
            if (done === undefined) continue
            return done
          }
          yield* setFlag(turn.state, "suppressTextOutput", true)
          continue
        }

        if (batch.allSucceeded && batch.names.every((name) => shouldEndAfterPreToolText(passText, name))) {
          const done = yield* conclude("completed", passText)
          if (done === undefined) continue
          return done
        }
        // NovelAI, spec §2.4 and §2.3 step 10: after pre-tool text tools that need no follow-up
        // end the turn; one that does gets a follow-up pass, which may post text again.
        if (batch.allSucceeded && novelAiCase) {
          const needed = yield* Effect.forEach(batch.names, (name) => registry.requiresFollowUp(name, attempt.provider, turn.guildId, turn.state))
          if (!needed.includes(true)) {
            const done = yield* conclude("completed", passText)
            if (done === undefined) continue
            return done
          }
          yield* setFlag(turn.state, "suppressTextOutput", false)
        }
        continue
      }
    }
  }

  // The iteration cap: never a silent empty answer.
  yield* Effect.logWarning(`tool loop reached ${config.maxIterations} iterations: ending the turn`).pipe(
    Effect.annotateLogs({ channelId: turn.channelId, model: attempt.model })
  )
  if (turn.shouldSurfaceUserErrors) yield* sink.notice(UserNotice.MaxIterations({ iterations: config.maxIterations }))
  // A reply that never came must not carry the sticker chosen on the way.
  yield* Ref.update(state, (s) => ({ ...s, stickerSelection: s.stickerSelection === undefined ? undefined : null }))
  return yield* finish("timeout", "")
})

/** runToolLoop as the contract shows it: one attempt's AttemptResult. */
export const runToolLoop = (input: ToolLoopInput) => Effect.map(runToolLoopDetailed(input), (outcome) => outcome.result)
