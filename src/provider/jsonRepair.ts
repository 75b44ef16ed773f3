/**
 * Structural repair of a tool-argument JSON object that a provider cut off (docs/architecture.md,
 * "Truncated tool arguments").
 *
 * The repair never invents content: it keeps only entries that were complete before the cut,
 * closes the containers that were still open, and drops whatever was in flight (a key without
 * its value, a string cut mid-way, a literal cut mid-way, and a number at the very end, since
 * `12345` may be a cut `123456`). An open nested container keeps its complete entries; one with
 * no complete entry is dropped whole. Malformed input (a token that cannot follow, e.g.
 * `{"a": }`) is not a truncation and is never repaired.
 */
import { Predicate } from "effect"
import { parseJsonFrame } from "./jsonFrame"

import { defaultJsonRepairMaxChars } from "../config/HttpProviderConfig"

/** Default and floor of `BOT_JSON_REPAIR_MAX_CHARS` (defined with the setting). */
export { defaultJsonRepairMaxChars } from "../config/HttpProviderConfig"

const maxRepairPasses = 64

type Expect = "key" | "colon" | "value" | "separator"

interface Frame {
  readonly kind: "object" | "array"
  expect: Expect
  /** Offset just after the last complete entry of this container, or -1 when it has none. */
  lastEntryEnd: number
}

type ScanOutcome =
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "Complete" }
  | { readonly _tag: "Truncated"; readonly frames: ReadonlyArray<Frame> }

const isWhitespace = (char: string): boolean => char === " " || char === "\n" || char === "\r" || char === "\t"
const isDigit = (char: string | undefined): boolean => char !== undefined && char >= "0" && char <= "9"
const isHex = (char: string): boolean => /^[0-9a-fA-F]$/.test(char)
const completeNumber = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
/** A prefix that could still grow into a number: `-`, `1.`, `1e`, `1e+`. */
const numberPrefix = /^-?(?:(?:0|[1-9]\d*)(?:\.\d*)?(?:[eE][+-]?\d*)?)?$/
const literals = ["true", "false", "null"] as const

/** Scans a string starting at the opening quote; returns the offset after the closing quote. */
const scanString = (raw: string, start: number): number | "eof" | "malformed" => {
  let index = start + 1
  while (index < raw.length) {
    const char = raw[index]!
    if (char === "\"") return index + 1
    if (char === "\\") {
      const escaped = raw[index + 1]
      if (escaped === undefined) return "eof"
      if (escaped === "u") {
        const hex = raw.slice(index + 2, index + 6)
        if (![...hex].every(isHex)) return "malformed"
        if (hex.length < 4) return "eof"
        index += 6
        continue
      }
      if (!"\"\\/bfnrt".includes(escaped)) return "malformed"
      index += 2
      continue
    }
    if (char < " ") return "malformed"
    index += 1
  }
  return "eof"
}

const scan = (raw: string): ScanOutcome => {
  const frames: Array<Frame> = []
  let index = 0
  let rootDone = false

  // A value finished at `end`: the enclosing container now expects a separator.
  const completeValue = (end: number) => {
    const top = frames[frames.length - 1]
    if (top === undefined) {
      rootDone = true
      return
    }
    top.expect = "separator"
    top.lastEntryEnd = end
  }
  const truncated = (): ScanOutcome => ({ _tag: "Truncated", frames })

  while (index < raw.length) {
    const char = raw[index]!
    if (isWhitespace(char)) {
      index += 1
      continue
    }
    if (rootDone) return { _tag: "Malformed" }
    const top = frames[frames.length - 1]
    const expect: Expect = top === undefined ? "value" : top.expect

    if (char === "}" || char === "]") {
      const kind = char === "}" ? "object" : "array"
      if (top === undefined || top.kind !== kind) return { _tag: "Malformed" }
      const empty = top.lastEntryEnd === -1
      const canClose = expect === "separator" || (empty && (kind === "object" ? expect === "key" : expect === "value"))
      if (!canClose) return { _tag: "Malformed" }
      frames.pop()
      index += 1
      completeValue(index)
      continue
    }
    if (char === ",") {
      if (top === undefined || expect !== "separator") return { _tag: "Malformed" }
      top.expect = top.kind === "object" ? "key" : "value"
      index += 1
      continue
    }
    if (char === ":") {
      if (top === undefined || expect !== "colon") return { _tag: "Malformed" }
      top.expect = "value"
      index += 1
      continue
    }
    if (char === "\"") {
      if (expect !== "key" && expect !== "value") return { _tag: "Malformed" }
      const end = scanString(raw, index)
      if (end === "malformed") return { _tag: "Malformed" }
      if (end === "eof") return truncated()
      index = end
      if (expect === "key") top!.expect = "colon"
      else completeValue(index)
      continue
    }
    if (expect !== "value") return { _tag: "Malformed" }
    if (char === "{" || char === "[") {
      // The result must be an object: a top-level array is not something we repair.
      if (top === undefined && char === "[") return { _tag: "Malformed" }
      frames.push({ kind: char === "{" ? "object" : "array", expect: char === "{" ? "key" : "value", lastEntryEnd: -1 })
      index += 1
      continue
    }
    if (top === undefined) return { _tag: "Malformed" }
    if (char === "-" || isDigit(char)) {
      let end = index
      while (end < raw.length && /[-+.eE0-9]/.test(raw[end]!)) end += 1
      const token = raw.slice(index, end)
      // A number touching the end of the input may be cut: it is in flight, not complete.
      if (end === raw.length) return numberPrefix.test(token) ? truncated() : { _tag: "Malformed" }
      if (!completeNumber.test(token)) return { _tag: "Malformed" }
      index = end
      completeValue(index)
      continue
    }
    const rest = raw.slice(index, index + 5)
    const literal = literals.find((candidate) => rest.startsWith(candidate))
    if (literal !== undefined) {
      index += literal.length
      completeValue(index)
      continue
    }
    if (index + rest.length === raw.length && literals.some((candidate) => candidate.startsWith(rest))) {
      return truncated()
    }
    return { _tag: "Malformed" }
  }
  if (rootDone) return { _tag: "Complete" }
  return frames.length === 0 ? { _tag: "Malformed" } : truncated()
}

const closer = (frame: Frame): string => (frame.kind === "object" ? "}" : "]")

const parseObject = (text: string): Record<string, unknown> | null => {
  const parsed = parseJsonFrame(text)
  return parsed.ok && Predicate.isObject(parsed.value) ? parsed.value : null
}

/**
 * Repairs a truncated JSON object, or returns null when the input is empty, longer than
 * `maxChars`, malformed, complete (nothing to repair), or not an object.
 */
export const tryRepairIncompleteJson = (
  raw: string,
  maxChars: number = defaultJsonRepairMaxChars
): Record<string, unknown> | null => {
  if (raw.trim().length === 0 || raw.length > maxChars) return null
  const outcome = scan(raw)
  if (outcome._tag !== "Truncated") return null
  const frames = outcome.frames
  // Cut inside the deepest container that has a complete entry (deeper ones have none and are
  // dropped whole), then close it and every ancestor. Shallower cuts are the fallbacks.
  let passes = 0
  for (let depth = frames.length - 1; depth >= 0 && passes < maxRepairPasses; depth -= 1) {
    const frame = frames[depth]!
    if (frame.lastEntryEnd === -1 && depth > 0) continue
    passes += 1
    const kept = frame.lastEntryEnd === -1 ? "{" : raw.slice(0, frame.lastEntryEnd)
    let candidate = kept
    for (let open = depth; open >= 0; open -= 1) candidate += closer(frames[open]!)
    const repaired = parseObject(candidate)
    if (repaired !== null) return repaired
  }
  return null
}
