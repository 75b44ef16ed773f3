import { Effect, Result } from "effect"
import { type AttemptOptions, runAttempt, type TransportAttempt } from "./connectAttempt"
import { type McpAttemptFailure, McpConnectError } from "./McpErrors"
import type { McpSession } from "./McpSession"

/** A transport attempt and when a failure of it should lead on to the next one. */
export interface PlannedAttempt {
  readonly attempt: TransportAttempt
  readonly continueAfter: (failure: McpAttemptFailure) => boolean
}

/**
 * Tries the planned transports in order, each with its own fresh client and its own deadline,
 * until one connects. All failures are kept so the error lists each transport's message.
 */
export const connectInOrder = (
  server: string,
  plan: ReadonlyArray<PlannedAttempt>,
  options: AttemptOptions
): Effect.Effect<McpSession, McpConnectError> =>
  Effect.gen(function* () {
    const failures: Array<McpAttemptFailure> = []
    for (const step of plan) {
      const outcome = yield* Effect.result(runAttempt(server, step.attempt, options))
      if (Result.isSuccess(outcome)) return outcome.success
      failures.push(outcome.failure)
      if (!step.continueAfter(outcome.failure)) break
    }
    return yield* new McpConnectError({ server, attempts: failures })
  })
