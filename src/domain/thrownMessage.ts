import { Cause } from "effect"

/**
 * The message of what a promise threw, for operator logs: `Effect.tryPromise` wraps it in an
 * `UnknownError` whose own message is generic, so the thrown value's message is read from its cause.
 */
export const thrownMessage = (error: Cause.UnknownError): string =>
  error.cause instanceof Error ? error.cause.message : String(error.cause ?? error.message)
