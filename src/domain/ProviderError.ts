import { Data, Duration } from "effect"

/**
 * What went wrong talking to a provider. The reason tells the outer tier what to do:
 * `Auth` / `RateLimit` / `Server` / `Network` / `BadRequest` rotate the API key (an `error`
 * pass); `Stalled` is a stream that stopped producing and is handled as a timeout.
 */
export type ProviderErrorReason =
  | "Auth"
  | "RateLimit"
  | "Server"
  | "Network"
  | "BadRequest"
  | "InvalidResponse"
  | "Stalled"

export class ProviderError extends Data.TaggedError("ProviderError")<{
  readonly reason: ProviderErrorReason
  readonly provider: string
  readonly detail: string
  readonly status?: number
  readonly retryAfter?: Duration.Duration
  readonly cause?: unknown
}> {
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `${this.provider} ${this.reason}${status}: ${this.detail}`
  }
}

/** Rate limits cool a key for 60 s, other API errors for 5 min (spec §5). */
export const keyErrorKind = (error: ProviderError): "rate_limit" | "api_error" =>
  error.reason === "RateLimit" ? "rate_limit" : "api_error"
