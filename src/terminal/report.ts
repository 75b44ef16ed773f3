import { type ContextReport, elidedItems } from "../domain/ContextReport"
import type { TokenUsage } from "../domain/TokenUsage"
import type { TurnResult } from "../domain/TurnResult"

/** Usage with every key present (0 when the vendor reported no such detail), so consumers see one shape. */
const usageReport = (usage: TokenUsage) => ({
  inputTokens: usage.inputTokens,
  outputTokens: usage.outputTokens,
  totalTokens: usage.totalTokens,
  cachedInputTokens: usage.cachedInputTokens ?? 0,
  cacheWriteTokens: usage.cacheWriteTokens ?? 0,
  reasoningTokens: usage.reasoningTokens ?? 0
})

/** What the context budget did: the window, the last pass's prompt tokens, what was elided or cut. */
const contextReport = (context: ContextReport) => ({
  window: context.window,
  windowSource: context.windowSource,
  promptTokens: context.promptTokens,
  estimatedPromptTokens: context.estimatedPromptTokens,
  elidedItems: elidedItems(context),
  elided: context.elided,
  cutUserMessage: context.cutUserMessage,
  overflowRefusals: context.overflowRefusals,
  summaries: context.summaries
})

/**
 * The `--once --json` turn report, a public contract (docs/architecture.md, Public contracts):
 * exactly these keys in this order, then `context` (what the context budget did; null when the turn
 * asked no model with a known window). `response` is the exact payload replayed to the model;
 * absent arguments and usage are `null`. `usage` sums every pass of every attempt (failed attempts
 * included: their tokens were billed too).
 */
export const turnReport = (result: TurnResult) => ({
  status: result.status,
  text: result.text,
  iterations: result.iterations,
  attempts: result.attempts.map((attempt) => ({ model: attempt.model, keyIndex: attempt.keyIndex, status: attempt.status })),
  toolCalls: result.toolCalls.map((call) => ({
    name: call.name,
    args: call.args ?? null,
    success: call.success,
    response: call.response === undefined ? null : call.response,
    durationMs: call.durationMs
  })),
  usage: result.usage === undefined ? null : usageReport(result.usage),
  context: result.context === undefined ? null : contextReport(result.context),
  // Only on an `error` turn the front could not deliver (docs/architecture.md, Delivery).
  ...(result.reason === undefined ? {} : { reason: result.reason })
})

/** Serializes the report on one line (a tool payload with a bigint still serializes). */
export const turnReportLine = (result: TurnResult): string =>
  JSON.stringify(turnReport(result), (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))
