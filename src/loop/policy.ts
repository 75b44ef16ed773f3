import type { PassResult, TurnStatus } from "../domain/PassResult"

/**
 * How a finished attempt or turn counts for the outer tier (fallback, the follow-up count). The
 * stop rules of the pass loop itself are in stopConditions.ts.
 */

/** Statuses that reset the channel's consecutive follow-up count. */
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
 * retryable, and only when the provider caused them: a tool-error cap or the
 * iteration cap would repeat with any model, so they end the turn. So does a `DeliveryFailed`
 * pass: a destination that refused the reply refuses every model's.
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
