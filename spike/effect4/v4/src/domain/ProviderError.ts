import { Data, type Duration } from "effect"

/** What went wrong talking to a provider; the reason tells the outer tier what to do. */
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
  readonly window?: number
  readonly promptTokens?: number
}

export class ProviderError extends Data.TaggedError("ProviderError")<{
  readonly reason: ProviderErrorReason
  readonly provider: string
  readonly detail: string
  readonly status?: number
  readonly retryAfter?: Duration.Duration
  readonly overflow?: OverflowFacts
  readonly cause?: unknown
}> {
  override get message(): string {
    const status = this.status === undefined ? "" : ` (HTTP ${this.status})`
    return `${this.provider} ${this.reason}${status}: ${this.detail}`
  }
}
