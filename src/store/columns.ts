import type { SqlError } from "effect/sql/SqlError"
import { type ParseResult, Schema } from "effect"
import { StoreError } from "./StoreError"

/** A BIGINT column (epoch millis, counters): a number from SQLite, a string from PostgreSQL. */
export const DbBigInt = Schema.Union(Schema.Number, Schema.NumberFromString)

/** A 0/1 INTEGER flag (both dialects store it the same way). */
export const DbFlag = Schema.transform(Schema.Union(Schema.Literal(0, 1), Schema.Boolean), Schema.Boolean, {
  strict: true,
  decode: (value) => value === true || value === 1,
  encode: (value) => value
})

/** Nullable TEXT as `string | undefined`. */
export const DbOptionalText = Schema.transform(Schema.NullOr(Schema.String), Schema.UndefinedOr(Schema.String), {
  strict: true,
  decode: (value) => value ?? undefined,
  encode: (value) => value ?? null
})

export const flagValue = (enabled: boolean): number => (enabled ? 1 : 0)

/** The default persona is stored under the empty key, so it can be part of a primary key. */
export const personaKey = (personaId: string | undefined): string => personaId ?? ""
export const personaIdOf = (key: string): string | undefined => (key === "" ? undefined : key)

/** Converts the database's errors at the store edge: a row that does not decode is a storage fault. */
export const storeFailure =
  (store: string, operation: string) =>
  (cause: SqlError | ParseResult.ParseError): StoreError =>
    new StoreError({
      store,
      operation,
      reason: "storage",
      detail: cause._tag === "ParseError" ? "a stored row could not be read" : cause.message,
      cause
    })

export const invalidInput = (store: string, operation: string, detail: string): StoreError =>
  new StoreError({ store, operation, reason: "invalid_input", detail })
