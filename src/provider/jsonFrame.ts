/**
 * Parsing one JSON text that came from outside (an SSE `data:` line, an error body, a tool call's
 * arguments): never throws, so a decoder turns bad input into its own typed error. Records are
 * checked with effect's `Predicate.isObject` (an object that is not an array).
 */

type ParsedJson = { readonly ok: true; readonly value: unknown } | { readonly ok: false }

const notJson: ParsedJson = { ok: false }

export const parseJsonFrame = (text: string): ParsedJson => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return notJson
  }
}

/** The parsed value, or undefined when the text is not JSON (where either means "nothing usable"): the one shared helper. */
export { parseJsonOrUndefined } from "../domain/parseJson"
