import type { Data } from "effect"
import type { PassResult, TurnStatus } from "../domain/PassResult"

/**
 * Pure termination predicates of the tool loop (spec §2.4, §2.5, §5). No effects here: the
 * loop feeds them facts and acts on the answer.
 */

/** Tools whose success after visible pre-tool text ends the turn (memory updates are silent). */
export const TOOLS_SUPPRESS_FOLLOWUP_AFTER_PRETOOL_TEXT: ReadonlySet<string> = new Set(["update_short_term_memory"])

/**
 * §2.4, for every provider: a successful `update_short_term_memory` after non-blank pre-tool
 * text ends the turn with that text (no follow-up lookup). NovelAI's wider rule is
 * `novelAiMayEndAfterPreToolText` below.
 */
export const shouldEndAfterPreToolText = (preToolText: string, functionName: string): boolean =>
  preToolText.trim().length > 0 && TOOLS_SUPPRESS_FOLLOWUP_AFTER_PRETOOL_TEXT.has(functionName)

type EmptyPass = Data.TaggedEnum.Value<PassResult, "EmptyResponse">

/**
 * §2.5 without the registry lookup: whether an empty follow-up pass may settle at all. A cut
 * (`length`), discarded, or NovelAI-held (`naiContinuationPrefill`) answer never settles;
 * otherwise the last tool decides (`!requiresFollowUp(lastToolName)`).
 */
export const mayTrySettle = (pass: EmptyPass, lastToolName: string | undefined): lastToolName is string =>
  lastToolName !== undefined && pass.finishReason !== "length" && pass.emptyResponseReason === undefined &&
  pass.naiContinuationPrefill === undefined

/** Statuses that reset the channel's consecutive follow-up count (spec §2.2). */
export const resetsFollowUpCount = (status: TurnStatus): boolean =>
  status === "completed" || status === "error" || status === "timeout" || status === "stopped_by_user"

/** A provider may emit a call whose payload lacks a (non-blank) name. */
const hasName = (call: { readonly name?: unknown } | undefined): boolean => typeof call?.name === "string" && call.name.trim().length > 0

/**
 * Why an attempt failed, as far as the outer tier cares:
 * - `ProviderError`: the provider refused or broke (rotate the key, then the next model);
 * - `StreamTimeout`: the stream stalled (next model, no key rotation);
 * - `ModelError`: the model produced a malformed call (next model);
 * - `Terminal`: anything else (answered, stopped, a loop cap): no fallback.
 */
export type AttemptFailure = "ProviderError" | "StreamTimeout" | "ModelError" | "Terminal"

/**
 * Classifies an attempt from its status and terminating pass. Only `error` and `timeout` are
 * retryable (spec §5), and only when the provider caused them: a tool-error cap or the
 * iteration cap would repeat with any model, so they end the turn. So does a `DeliveryFailed`
 * pass: a destination that refused the reply refuses every model's (decision 18).
 */
export const attemptFailure = (status: TurnStatus, last: PassResult | undefined): AttemptFailure => {
  if (status !== "error" && status !== "timeout") return "Terminal"
  if (last === undefined) return "Terminal"
  if (status === "error" && last._tag === "Error") return "ProviderError"
  if (status === "timeout" && last._tag === "Timeout") return "StreamTimeout"
  // A malformed call aborts with `error` right after its FunctionCall pass.
  if (status === "error" && last._tag === "FunctionCall" && !last.calls.every(hasName)) return "ModelError"
  return "Terminal"
}

// --- NovelAI branch of the tool loop (spec §2.3 step 8, §2.4; issue 14) ---

/** Provider family whose models retry a failed tool without re-posting text (spec §2.3 step 8). */
export const NOVELAI_PROVIDER = "novelai"

/** `NAI_TOOL_FAILURE_RETRY_THRESHOLD` (spec §10, a constant in the reference). */
export const NAI_TOOL_FAILURE_RETRY_THRESHOLD = 3

export const isNovelAi = (provider: string): boolean => provider === NOVELAI_PROVIDER

/**
 * The NovelAI case of spec §2.3 steps 8–10 and §2.4: a NovelAI pass that wrote pre-tool text
 * (posted, or withheld on a retry). After such a pass a failed tool is retried without
 * re-posting text, and a successful one ends the turn unless it requires a follow-up.
 */
export const isNovelAiPreToolText = (provider: string, preToolText: string): boolean =>
  isNovelAi(provider) && preToolText.trim().length > 0

/** Failures of that kind in a row (this one included) after which the loop gives up (spec §2.3 step 8). */
export const novelAiRetryExhausted = (failures: number): boolean => failures >= NAI_TOOL_FAILURE_RETRY_THRESHOLD
