import { Effect, Option, type Redacted } from "effect"
import type { CredentialSource } from "../domain/CredentialSource"
import { keyErrorKind, type ProviderError } from "../domain/ProviderError"
import type { KeyPool } from "./KeyPool"

/**
 * The keys one route rotates through: which key to try next, and what a
 * failed or successful attempt does to it. The operator's pool rests keys process-wide
 * (`KeyPool`); a personal or server key is one key, never rested in the operator's pool.
 */
interface RouteKeys {
  /** The next key index to try for one model, none when every key was tried (or rests). */
  readonly next: (tried: ReadonlySet<number>) => Effect.Effect<Option.Option<number>>
  /** Whether another key remains after `tried` (the attempt may stay quiet on failure). */
  readonly hasAnother: (tried: ReadonlySet<number>) => Effect.Effect<boolean>
  /** The key at an index; `undefined` for a keyless endpoint. */
  readonly key: (index: number) => Redacted.Redacted<string> | undefined
  readonly recordError: (index: number, error: ProviderError) => Effect.Effect<void>
  readonly recordSuccess: (index: number) => Effect.Effect<void>
}

/** A way to pay for attempts: whose key, and its rotation. */
export interface CredentialRoute {
  readonly source: CredentialSource
  readonly keys: RouteKeys
}

/** The operator's `LLM_API_KEYS` through the process-wide pool (an empty list: a keyless endpoint). */
export const operatorRoute = (pool: KeyPool["Service"], keys: ReadonlyArray<Redacted.Redacted<string>>): CredentialRoute => ({
  source: "operator",
  keys: {
    next: (tried) => pool.next(keys.length, tried),
    hasAnother: (tried) => pool.hasAnother(keys.length, tried),
    key: (index) => keys[index],
    recordError: (index, error) => pool.recordError(index, keyErrorKind(error)),
    recordSuccess: (index) => pool.recordSuccess(index)
  }
})

/** One key of a user or a server: tried once per model; `onError` hears of every provider error on it. */
export const singleKeyRoute = (
  source: CredentialSource,
  key: Redacted.Redacted<string>,
  onError: (error: ProviderError) => Effect.Effect<void> = () => Effect.void
): CredentialRoute => ({
  source,
  keys: {
    next: (tried) => Effect.succeed(tried.has(0) ? Option.none() : Option.some(0)),
    hasAnother: (tried) => Effect.succeed(!tried.has(0)),
    key: (index) => (index === 0 ? key : undefined),
    recordError: (_index, error) => onError(error),
    recordSuccess: () => Effect.void
  }
})
