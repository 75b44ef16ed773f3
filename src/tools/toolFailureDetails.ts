/**
 * The JSON details block of a hidden tool-failure notice: the call's arguments
 * with credential-looking values redacted, and the result data, capped for a Discord embed.
 */

/** Longest details block a hidden notice carries. */
export const FAILURE_DETAILS_MAX_CHARS = 1800

const REDACTED = "[redacted]"

/** Name segments that mark a credential: `api_key`, `accessToken`, `client-secret`, `Authorization`… */
const CREDENTIAL_SEGMENTS: ReadonlySet<string> = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "passphrase",
  "authorization",
  "auth",
  "bearer",
  "cookie",
  "credential",
  "credentials"
])

/**
 * Whether a property name looks like it holds a credential. Names are split into words
 * (snake, kebab, camel case), so `api_key` and `apiKey` match but `keywords` does not.
 */
export const isCredentialKey = (name: string): boolean => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word.length > 0)
  return words.some((word) => CREDENTIAL_SEGMENTS.has(word)) || CREDENTIAL_SEGMENTS.has(words.join(""))
}

/** A deep copy of `value` with every credential-looking property replaced by `[redacted]`. */
export const redactCredentials = (value: unknown, seen: WeakSet<object> = new WeakSet()): unknown => {
  if (typeof value !== "object" || value === null) return value
  if (seen.has(value)) return "[circular]"
  seen.add(value)
  if (Array.isArray(value)) return value.map((item) => redactCredentials(item, seen))
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, isCredentialKey(key) ? REDACTED : redactCredentials(item, seen)])
  )
}

/** JSON that never throws: bigints as strings, cycles marked, unserializable values described. */
export const safeJson = (value: unknown): string => {
  const seen = new WeakSet<object>()
  try {
    return JSON.stringify(
      value,
      (_key, item: unknown) => {
        if (typeof item === "bigint") return item.toString()
        if (typeof item === "object" && item !== null) {
          if (seen.has(item)) return "[circular]"
          seen.add(item)
        }
        return item
      },
      2
    ) ?? "null"
  } catch (error) {
    return `"[unserializable: ${error instanceof Error ? error.message : String(error)}]"`
  }
}

/** Cuts `text` to at most `max` characters, marking the cut. */
export const capText = (text: string, max: number = FAILURE_DETAILS_MAX_CHARS): string =>
  text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`

/** The details block: `{args (redacted), data}` as JSON, at most 1800 characters. */
export const failureDetails = (args: unknown, data: unknown): string =>
  capText(safeJson({ args: redactCredentials(args ?? {}), data: redactCredentials(data) }))
