import type { SqlError } from "effect/sql/SqlError"
import { Schema, SchemaTransformation } from "effect"
import { StoreError } from "./StoreError"

/** A bigint read as a number (epoch millis and counters stay far below 2^53). */
const NumberFromBigInt = Schema.BigInt.pipe(
  Schema.decodeTo(
    Schema.Number,
    SchemaTransformation.transform({ decode: (value: bigint) => Number(value), encode: (value: number) => BigInt(value) })
  )
)

/**
 * A BIGINT column (epoch millis, counters): a number from SQLite, a bigint from PostgreSQL (a
 * string from drivers that send int8 as text).
 */
export const DbBigInt = Schema.Union([Schema.Number, NumberFromBigInt, Schema.NumberFromString])

/** A 0/1 INTEGER flag (both dialects store it the same way). */
export const DbFlag = Schema.Union([Schema.Literals([0, 1]), Schema.Boolean]).pipe(
  Schema.decodeTo(
    Schema.Boolean,
    SchemaTransformation.transform<boolean, 0 | 1 | boolean>({
      decode: (value) => value === true || value === 1,
      encode: (value) => value
    })
  )
)

/** Nullable TEXT as `string | undefined`. */
export const DbOptionalText = Schema.NullOr(Schema.String).pipe(
  Schema.decodeTo(
    Schema.UndefinedOr(Schema.String),
    SchemaTransformation.transform({
      decode: (value: string | null) => value ?? undefined,
      encode: (value: string | undefined) => value ?? null
    })
  )
)

export const flagValue = (enabled: boolean): number => (enabled ? 1 : 0)

/** The default persona is stored under the empty key, so it can be part of a primary key. */
export const personaKey = (personaId: string | undefined): string => personaId ?? ""
export const personaIdOf = (key: string): string | undefined => (key === "" ? undefined : key)

/** Converts the database's errors at the store edge: a row that does not decode is a storage fault. */
export const storeFailure =
  (store: string, operation: string) =>
  (cause: SqlError | Schema.SchemaError): StoreError =>
    new StoreError({
      store,
      operation,
      reason: "storage",
      detail: cause._tag === "SchemaError" ? "a stored row could not be read" : cause.message,
      cause
    })

export const invalidInput = (store: string, operation: string, detail: string): StoreError =>
  new StoreError({ store, operation, reason: "invalid_input", detail })
