import { Data, Duration } from "effect"

/**
 * What went wrong talking to a provider. The reason tells the outer tier what to do:
 * `Auth` / `RateLimit` / `Server` / `Network` / `BadRequest` rotate the API key (an `error`
 * pass); `Stalled` is a stream that stopped producing and is handled as a timeout;
 * `ContextOverflow` is a request too long for the model's window: the key is fine (it is never
 * rested), and the pass is retried smaller on the same model.
 */
export type ProviderErrorReason =
  | "Auth"
  | "RateLimit"
  | "Server"
  | "Network"
  | "BadRequest"
  | "InvalidResponse"
  | "Stalled"
  | "ContextOverflow"

/** What a context-length refusal said about the window, when it said it (tokens). */
export interface OverflowFacts {
  /** The model's window as the server states it. */
  readonly window?: number
  /** The prompt tokens the server counted for the refused request. */
  readonly promptTokens?: number
}

export class ProviderError extends Data.TaggedError("ProviderError")<{
  readonly reason: ProviderErrorReason
  readonly provider: string
  readonly detail: string
  readonly status?: number
  readonly retryAfter?: Duration.Duration
  /** Set on a `ContextOverflow`: what the refusal said about the window. */
  readonly overflow?: OverflowFacts
  readonly cause?: unknown
}> {
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `${this.provider} ${this.reason}${status}: ${this.detail}`
  }
}

/** Rate limits cool a key for 60 s, other API errors for 5 min (docs/architecture.md, Model fallback and key rotation). */
export const keyErrorKind = (error: ProviderError): "rate_limit" | "api_error" =>
  error.reason === "RateLimit" ? "rate_limit" : "api_error"
