import type { Effect } from "effect"
import { logInfoWith } from "../config/LoggingConfig"
import type { TurnResult } from "../domain/TurnResult"

/**
 * One info line per finished turn: its status, passes and usage summed over every pass of every
 * attempt (input, output, cached, cache-write and reasoning tokens), as the `--once --json`
 * report shows it. Logs carry no text of the conversation. The annotations are built only when
 * info is logged.
 */
export const logTurnSummary = (result: TurnResult, context: Readonly<Record<string, unknown>> = {}): Effect.Effect<void> =>
  logInfoWith("turn finished", () => ({
      ...context,
      status: result.status,
      iterations: result.iterations,
      attempts: result.attempts.length,
      toolCalls: result.toolCalls.length,
      ...(result.usage === undefined ? {} : {
        inputTokens: result.usage.inputTokens,
        outputTokens: result.usage.outputTokens,
        cachedInputTokens: result.usage.cachedInputTokens ?? 0,
        cacheWriteTokens: result.usage.cacheWriteTokens ?? 0,
        reasoningTokens: result.usage.reasoningTokens ?? 0
      })
  }))
