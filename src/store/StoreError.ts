import { Data } from "effect"

/**
 * A store could not do what was asked. `invalid_input` is the caller's fault (a bad argument
 * reached the store); `storage` is the database's (connection lost, constraint, bad row);
 * `timeout`: the database did not answer within `STORE_TIMEOUT_MS`.
 * SqlError and SchemaError are converted to this at the store edge, so callers see one type.
 */
export class StoreError extends Data.TaggedError("StoreError")<{
  /** Which store, e.g. `PersonaBlockStore`. */
  readonly store: string
  /** Which method, e.g. `block`. */
  readonly operation: string
  readonly reason: "invalid_input" | "storage" | "timeout"
  readonly detail: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `${this.store}.${this.operation}: ${this.detail}`
  }
}
