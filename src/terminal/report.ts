import type { TurnResult } from "../domain/TurnResult"

/**
 * The `--once --json` turn report (design §5.1): exactly these keys in this order. `response`
 * is the exact payload replayed to the model; absent arguments and usage are `null`.
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
  usage: result.usage === undefined
    ? null
    : { inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens, totalTokens: result.usage.totalTokens },
  // Only on an `error` turn the front could not deliver (decision 18).
  ...(result.reason === undefined ? {} : { reason: result.reason })
})

/** Serializes the report on one line (a tool payload with a bigint still serializes). */
export const turnReportLine = (result: TurnResult): string =>
  JSON.stringify(turnReport(result), (_key, value: unknown) => (typeof value === "bigint" ? value.toString() : value))
