import type { Redacted } from "effect"
import type { PassResult, ThoughtLogPayload, TurnStatus } from "../domain/PassResult"
import type { Sticker } from "../domain/Sticker"
import { ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { AttemptResult, ToolCallRecord } from "../domain/TurnResult"
import type { AttemptInfo } from "./AttemptInfo"
import { type BuildResultInput, mergeDetails } from "./buildResult"
import type { PassCallsFold } from "./foldPassCalls"
import type { LoopHooksFactory } from "./LoopHooks"

export interface ToolLoopInput {
  readonly attempt: AttemptInfo
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** Tool history of earlier, failed attempts of this turn: those tools never run twice. */
  readonly functionHistory?: ReadonlyArray<ToolHistoryEntry>
  /**
   * Reply text an earlier attempt already delivered after its last tool call: the model is
   * given it as the start of its answer and continues it.
   */
  readonly prefill?: string
  /** An earlier attempt of this turn already delivered a tool response. */
  readonly toolResponseDelivered?: boolean
  /** The sticker chosen by an earlier attempt (`null`: chosen then cleared). */
  readonly stickerSelection?: Sticker | null
  /** What features add to the loop (docs/architecture.md, "Loop core and its hooks"); none by default. */
  readonly hooks?: LoopHooksFactory
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

/** What one attempt's pass loop keeps between passes. */
export interface LoopState {
  readonly passes: ReadonlyArray<PassResult>
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  readonly toolCalls: ReadonlyArray<ToolCallRecord>
  /**
   * Text delivered since the last history entry that the model must continue from: the
   * fallback prefill, plus pre-tool text of a pass whose every call restarted the context (that
   * text is on no history entry, so it stays the start of the answer).
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
  /** Scene metadata merged over the passes. */
  readonly detailsText: string
  /** Counted tool failures in a row after pre-tool text (a pass policy may act on them). */
  readonly failuresAfterText: number
}

const isBlank = (text: string) => text.trim().length === 0

export const initialLoopState = (input: ToolLoopInput): LoopState => {
  const prefill = input.prefill ?? ""
  return {
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
    failuresAfterText: 0
  }
}

/** Passes are numbered across the turn's attempts: an inherited batch never merges with a new one. */
export const batchOffset = (input: ToolLoopInput): number =>
  (input.functionHistory ?? []).reduce((most, entry) => Math.max(most, entry.batch ?? 0), 0)

/** A pass ended: it joins the passes, and its scene metadata (completed, stopped or calling) the details. */
export const withPass = (s: LoopState, pass: PassResult): LoopState => ({
  ...s,
  passes: [...s.passes, pass],
  thoughtLog: pass.thoughtLog ?? s.thoughtLog,
  detailsText: pass._tag === "Completed" || pass._tag === "StoppedByUser" || pass._tag === "FunctionCall"
    ? mergeDetails(s.detailsText, pass.detailsContent)
    : s.detailsText
})

/** The folded calls of a pass join the state (docs/architecture.md, "Tool calls of one pass"). */
export const withBatch = (s: LoopState, fold: PassCallsFold, passText: string): LoopState => ({
  ...s,
  functionHistory: [...s.functionHistory, ...fold.entries],
  // The pre-tool text now lives on the first entry; only a pass whose every call restarted
  // the context keeps carrying it.
  carried: fold.entries.length === 0 ? passText : "",
  carriedFromFallback: false,
  lastToolName: fold.names.at(-1) ?? s.lastToolName,
  toolResponseDelivered: s.toolResponseDelivered || fold.responseDelivered,
  stickerSelection: fold.stickerSelection === undefined ? s.stickerSelection : fold.stickerSelection,
  consecutiveToolErrors: fold.consecutiveToolErrors,
  failuresAfterText: fold.failuresAfterText
})

/** The held answer is written again: nothing of it was shown, so the model must not believe it said it. */
export const forRevision = (s: LoopState): LoopState => ({
  ...s,
  carried: "",
  carriedFromFallback: false,
  lastDelivered: undefined,
  detailsText: "",
  functionHistory: s.functionHistory.map(withoutPreToolText)
})

/** A reply that never came (the iteration cap) must not carry what was chosen to go with it. */
export const withoutReplyExtras = (s: LoopState): LoopState => ({
  ...s,
  stickerSelection: s.stickerSelection === undefined ? undefined : null
})

const withoutPreToolText = (entry: ToolHistoryEntry): ToolHistoryEntry => {
  if (entry.preToolCallTextParts === undefined) return entry
  const { preToolCallTextParts: _dropped, ...rest } = entry
  return ToolHistoryEntry(rest)
}

/** What the attempt's result is built from, the state being `s`. */
export const resultInput = (s: LoopState, status: TurnStatus, responseText: string, details: string): BuildResultInput => ({
  status,
  responseText,
  details,
  passes: s.passes,
  toolCalls: s.toolCalls,
  toolResponseDelivered: s.toolResponseDelivered,
  thoughtLog: s.thoughtLog,
  stickerSelection: s.stickerSelection
})

export const outcomeOf = (s: LoopState, result: AttemptResult): ToolLoopOutcome => ({
  result,
  unansweredText: s.carried,
  functionHistory: s.functionHistory,
  stickerSelection: s.stickerSelection
})
