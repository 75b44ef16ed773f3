import { Effect, Ref } from "effect"
import { ContextConfig } from "../../config/ContextConfig"
import type { ChatMessage } from "../../domain/ChatMessage"
import type { ContextReport } from "../../domain/ContextReport"
import type { PassResult } from "../../domain/PassResult"
import type { GenerationRequest } from "../../provider/GenerationRequest"
import { LanguageModel } from "../../provider/LanguageModel"
import { type ModelWindow, ModelWindows, noKnownWindows } from "../../provider/ModelWindows"
import type { AttemptInfo } from "../AttemptInfo"
import { CurrentTurn } from "../CurrentTurn"
import { ResponseSink } from "../ResponseSink"
import { ThoughtLog } from "../ThoughtLog"
import { TurnSignals } from "../TurnSignals"
import { UserNotice } from "../UserNotice"
import { type BudgetOutcome, budgetRequest } from "./budget"
import { exchangesOf } from "./exchanges"
import { summarizeExchanges } from "./summarizeExchanges"

/**
 * One attempt's context budget: before each pass the request is fitted to the model's window
 * (`fit`), after it the estimate is corrected by the prompt tokens the provider reported, and a
 * context-length refusal is learned from and retried smaller (`afterPass`).
 *
 * The prompt may take the window less the output reserve (the request's `maxOutputTokens`, else
 * what the provider asks for by default, else an eighth of the window up to 4096) and a margin (5 %, at least 256 tokens). Estimates are the
 * raw character-class counts times a factor: 1.25 before the provider has reported anything (the
 * raw count is within 0.8–1.7× of real tokenizers), then the ratio of the prompt tokens it
 * reported to the raw count of the request it answered.
 */
interface ContextBudget {
  /** The request cut to fit the model's window (the request itself when it fits or no window is known). */
  readonly fit: (request: GenerationRequest) => Effect.Effect<GenerationRequest>
  /** After a pass: `retry` when it was refused for its length and may be sent again, smaller. */
  readonly afterPass: (pass: PassResult) => Effect.Effect<"retry" | "go_on">
  readonly report: Effect.Effect<ContextReport | undefined>
}

/** A pass refused for its length is retried at most this often (then the attempt fails). */
const MAX_OVERFLOW_RETRIES = 2
/** The factor before any report: the raw estimate is at worst ~0.8× a real tokenizer's count (JSON with hashes). */
const UNCALIBRATED_FACTOR = 1.25
const MIN_FACTOR = 0.6
const MAX_FACTOR = 4
/** A refusal that says neither the window nor the prompt's size shrinks the budget by this much. */
const BLIND_TIGHTENING = 0.75
const MAX_OUTPUT_RESERVE = 4_096

const outputReserve = (window: number, maxOutputTokens: number | undefined): number =>
  maxOutputTokens ?? Math.min(MAX_OUTPUT_RESERVE, Math.floor(window / 8))

const safetyMargin = (window: number): number => Math.max(256, Math.ceil(window * 0.05))

interface BudgetState {
  readonly window: ModelWindow | undefined | "unknown"
  readonly factor: number
  readonly tightening: number
  /** Raw tokens of the last request sent, and the calibrated estimate of it. */
  readonly lastRaw: number
  readonly lastEstimate: number | null
  readonly promptTokens: number | null
  readonly retries: number
  readonly refusals: number
  readonly summary: { readonly covers: number; readonly text: string } | undefined
  readonly summaries: number
  readonly cutUserMessage: { readonly keptChars: number; readonly totalChars: number } | null
}

const initialState: BudgetState = {
  window: "unknown",
  factor: UNCALIBRATED_FACTOR,
  tightening: 1,
  lastRaw: 0,
  lastEstimate: null,
  promptTokens: null,
  retries: 0,
  refusals: 0,
  summary: undefined,
  summaries: 0,
  cutUserMessage: null
}

const clamp = (value: number) => Math.min(MAX_FACTOR, Math.max(MIN_FACTOR, value))

/** Distinct items an attempt elided, counted once however many passes repeat it. */
interface Seen {
  readonly toolResults: WeakSet<object>
  readonly toolExchanges: WeakSet<object>
  readonly historyMessages: WeakSet<object>
  readonly historyImages: WeakSet<object>
  readonly cutToolResults: WeakSet<object>
  counts: { toolResults: number; toolExchanges: number; historyMessages: number; historyImages: number; cutToolResults: number }
}

const countNew = (seen: WeakSet<object>, items: ReadonlyArray<object>): number => {
  let fresh = 0
  for (const item of items) {
    if (seen.has(item)) continue
    seen.add(item)
    fresh++
  }
  return fresh
}

/** The message being answered: the one with the turn's message id, else the last user item the turn started with. */
const questionIndex = (messages: ReadonlyArray<ChatMessage>, messageId: string | undefined, initial: ChatMessage | undefined): number => {
  if (messageId !== undefined) {
    const byId = messages.findLastIndex((message) => message.messageId === messageId)
    if (byId >= 0) return byId
  }
  return initial === undefined ? -1 : messages.lastIndexOf(initial)
}

export const makeContextBudget = Effect.fnUntraced(function*(attempt: AttemptInfo) {
  const windows = yield* ModelWindows
  const { compaction } = yield* ContextConfig
  const turn = yield* CurrentTurn
  const signals = yield* TurnSignals
  const thoughtLog = yield* ThoughtLog
  const sink = yield* ResponseSink
  const model = yield* LanguageModel
  const state = yield* Ref.make(initialState)
  const initial = (yield* Ref.get(turn.state.contextItems)).findLast((message) => message.role === "user")
  // Only this attempt's loop fiber uses them, one pass at a time.
  const seen: Seen = {
    toolResults: new WeakSet(),
    toolExchanges: new WeakSet(),
    historyMessages: new WeakSet(),
    historyImages: new WeakSet(),
    cutToolResults: new WeakSet(),
    counts: { toolResults: 0, toolExchanges: 0, historyMessages: 0, historyImages: 0, cutToolResults: 0 }
  }

  /** The window, asked once per attempt; a wait for the server's answer yields to /kill. */
  const windowFor = Effect.gen(function*() {
    const known = (yield* Ref.get(state)).window
    if (known !== "unknown") return known
    // Nothing to wait for without windows (tests, embedding): no race, no fibers.
    const window = windows === noKnownWindows
      ? undefined
      : yield* Effect.raceFirst(windows.windowOf(attempt.model), Effect.as(signals.awaitKill, undefined))
    yield* Ref.update(state, (s) => ({ ...s, window }))
    return window
  })

  const record = (outcome: BudgetOutcome, window: ModelWindow, estimate: number) =>
    Effect.gen(function*() {
      const fresh = {
        toolResults: countNew(seen.toolResults, outcome.elidedResults),
        toolExchanges: countNew(seen.toolExchanges, outcome.droppedExchanges.map((exchange) => exchange.entries[0] ?? exchange)),
        historyMessages: countNew(seen.historyMessages, outcome.droppedMessages),
        historyImages: countNew(seen.historyImages, outcome.droppedImages),
        cutToolResults: countNew(seen.cutToolResults, outcome.cutResult === undefined ? [] : [outcome.request.functionHistory.at(-1)?.functionCall ?? {}])
      }
      seen.counts = {
        toolResults: seen.counts.toolResults + fresh.toolResults,
        toolExchanges: seen.counts.toolExchanges + fresh.toolExchanges,
        historyMessages: seen.counts.historyMessages + fresh.historyMessages,
        historyImages: seen.counts.historyImages + fresh.historyImages,
        cutToolResults: seen.counts.cutToolResults + fresh.cutToolResults
      }
      const anyFresh = Object.values(fresh).some((count) => count > 0) || outcome.cutQuestion !== undefined
      if (anyFresh) {
        yield* Effect.logInfo("context budget: the request was shortened to fit the model's window").pipe(
          Effect.annotateLogs({
            model: attempt.model,
            window: window.tokens,
            windowSource: window.source,
            estimatedTokens: estimate,
            ...fresh,
            ...(outcome.cutQuestion === undefined ? {} : { cutUserMessageKeptChars: outcome.cutQuestion.keptChars, cutUserMessageChars: outcome.cutQuestion.totalChars })
          })
        )
      }
      if (!outcome.fits) {
        yield* Effect.logWarning("context budget: the request is over the model's window even with every rule applied; sent anyway").pipe(
          Effect.annotateLogs({ model: attempt.model, window: window.tokens, estimatedTokens: estimate })
        )
      }
      const cut = outcome.cutQuestion
      if (cut !== undefined && (yield* Ref.get(state)).cutUserMessage === null) {
        yield* Ref.update(state, (s) => ({ ...s, cutUserMessage: cut }))
        // The user is told beside the reply; operators in the thought log.
        if (turn.shouldSurfaceUserErrors) yield* sink.notice(UserNotice.MessageShortened(cut))
        yield* thoughtLog.post({
          kind: "context_cut",
          severity: "info",
          title: "Message shortened to fit the model's context window",
          description: `${attempt.model} (window ${window.tokens} tokens, ${window.source}) saw ${cut.keptChars} of the message's ${cut.totalChars} characters: its start and end.`,
          channelId: turn.channelId,
          guildId: turn.guildId
        })
      }
    })

  const fit = (request: GenerationRequest): Effect.Effect<GenerationRequest> =>
    Effect.gen(function*() {
      const window = yield* windowFor
      if (window === undefined) return request
      const s = yield* Ref.get(state)
      const factor = s.factor
      const reserve = outputReserve(window.tokens, request.maxOutputTokens ?? window.defaultOutputTokens)
      const room = (window.tokens - reserve - safetyMargin(window.tokens)) * s.tightening
      const limit = Math.max(0, Math.floor(room / factor))
      const exchanges = exchangesOf(request.functionHistory)
      const messages = request.messages
      const question = questionIndex(messages, turn.messageId, initial)
      const plan = (summary: BudgetState["summary"]) => budgetRequest({ request, exchanges, question, limit, compaction, summary })
      let outcome = plan(s.summary)
      const wanted = outcome.wantsSummary
      if (wanted !== undefined && (s.summary?.covers ?? 0) < wanted) {
        const written = yield* summarizeExchanges({
          model,
          request,
          exchanges: exchanges.slice(0, wanted),
          earlier: s.summary,
          window: window.tokens,
          limit,
          signals
        })
        if (written !== undefined) {
          const summary = { covers: wanted, text: written }
          yield* Ref.update(state, (current) => ({ ...current, summary, summaries: current.summaries + 1 }))
          yield* Effect.logInfo(`context budget: the first ${wanted} tool calls of the turn were summarised`).pipe(Effect.annotateLogs({ model: attempt.model }))
          outcome = plan(summary)
        }
      }
      const estimate = Math.ceil(outcome.tokens * factor)
      // A request under the limit by its characters alone was not counted: nothing to calibrate against.
      yield* Ref.update(state, (current) =>
        outcome.counted ? { ...current, lastRaw: outcome.tokens, lastEstimate: estimate } : { ...current, lastRaw: 0 })
      if (outcome.request !== request) yield* record(outcome, window, estimate)
      return outcome.request
    })

  const afterPass = (pass: PassResult): Effect.Effect<"retry" | "go_on"> =>
    Effect.gen(function*() {
      const s = yield* Ref.get(state)
      if (pass._tag === "Error" && pass.error.reason === "ContextOverflow") {
        const facts = pass.error.overflow ?? {}
        if (facts.window !== undefined) yield* windows.learn(attempt.model, facts.window)
        const known = s.window === "unknown" ? undefined : s.window
        const window = facts.window !== undefined && (known === undefined || facts.window < known.tokens)
          ? { tokens: facts.window, source: "learned" as const }
          : known
        // The server's own count of the refused request corrects the estimate at once.
        const factor = facts.promptTokens !== undefined && s.lastRaw > 0 ? Math.max(s.factor, clamp(facts.promptTokens / s.lastRaw)) : s.factor
        const blind = facts.window === undefined && facts.promptTokens === undefined
        // Without any window nothing can be made smaller: the same request would be refused again.
        const retry = window !== undefined && s.retries < MAX_OVERFLOW_RETRIES && pass.accumulatedText.trim().length === 0
        yield* Ref.set(state, {
          ...s,
          window: window ?? s.window,
          factor,
          tightening: blind ? s.tightening * BLIND_TIGHTENING : s.tightening,
          retries: retry ? s.retries + 1 : s.retries,
          refusals: s.refusals + 1
        })
        yield* Effect.logWarning(retry
          ? "the model refused the request as too long for its context window; retrying it smaller on the same model"
          : "the model refused the request as too long for its context window again; giving up on this model").pipe(
          Effect.annotateLogs({ model: attempt.model, window: facts.window ?? known?.tokens ?? "unknown", promptTokens: facts.promptTokens ?? "unknown", retry: s.retries + 1 })
        )
        return retry ? "retry" : "go_on"
      }
      const reported = pass.usage?.inputTokens
      const calibrated = reported !== undefined && reported > 0 && s.lastRaw > 0
      yield* Ref.set(state, {
        ...s,
        factor: calibrated ? clamp(reported / s.lastRaw) : s.factor,
        promptTokens: calibrated ? reported : null,
        retries: 0
      })
      return "go_on"
    })

  const report = Effect.map(Ref.get(state), (s): ContextReport | undefined => {
    const window = s.window === "unknown" ? undefined : s.window
    return {
      window: window?.tokens ?? null,
      windowSource: window?.source ?? null,
      promptTokens: s.promptTokens,
      estimatedPromptTokens: window === undefined ? null : s.lastEstimate,
      elided: { ...seen.counts },
      cutUserMessage: s.cutUserMessage,
      overflowRefusals: s.refusals,
      summaries: s.summaries
    }
  })

  return { fit, afterPass, report } satisfies ContextBudget
})
