import type { ProviderErrorReason } from "../domain/ProviderError"

/**
 * Why a model failed, as the channel may see it: a class, never the
 * vendor's text, hosts or addresses — those go to the thought log and the logs.
 */
export type FailureClass =
  | "key_refused"
  | "rate_limited"
  | "service_error"
  | "unreachable"
  | "request_refused"
  | "malformed_answer"
  | "stream_stalled"
  | "no_first_token"
  | "malformed_tool_call"
  | "internal_error"
  | "context_too_long"

const byProviderReason: Record<ProviderErrorReason, FailureClass> = {
  Auth: "key_refused",
  RateLimit: "rate_limited",
  Server: "service_error",
  Network: "unreachable",
  BadRequest: "request_refused",
  InvalidResponse: "malformed_answer",
  Stalled: "stream_stalled",
  ContextOverflow: "context_too_long"
}

export const failureClassOf = (reason: ProviderErrorReason): FailureClass => byProviderReason[reason]

/** The words a front shows for a class (English, like every other notice). */
export const failureClassText: Record<FailureClass, string> = {
  key_refused: "the API key was refused",
  rate_limited: "rate limited",
  service_error: "the service had an error",
  unreachable: "the service could not be reached",
  request_refused: "the service refused the request",
  malformed_answer: "the answer was malformed",
  stream_stalled: "the stream stalled",
  no_first_token: "no answer before the first-token deadline",
  malformed_tool_call: "the model produced a malformed tool call",
  internal_error: "an internal error ended the reply",
  context_too_long: "the conversation was too long for the model"
}
