/**
 * The value `text` holds as JSON, or `undefined` when it is not JSON (no JSON text parses to
 * `undefined`, so the two never mix). For inputs whose parse failure is an ordinary answer (an
 * error body, a probe); where the failure must be reported, parse with a typed error instead.
 */
export const parseJsonOrUndefined = (text: string): unknown | undefined => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}
