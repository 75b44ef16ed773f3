/**
 * Size and depth of a JSON value without recursion: a hostile server's 100 000-deep schema
 * would overflow the stack of `JSON.stringify` (or of any recursive walk), so a value is
 * measured with an explicit stack and the walk stops at the first bound it crosses.
 */
type JsonMeasure =
  | { readonly ok: true; readonly chars: number }
  | { readonly ok: false; readonly reason: "too_large" | "too_deep" }

interface JsonBounds {
  /** Characters of the serialized value (`JSON.stringify(value).length`). */
  readonly maxChars: number
  /** Nesting of arrays and objects; a scalar has depth 0, `{}` depth 1. */
  readonly maxDepth: number
}

const scalarChars = (value: unknown): number => {
  if (typeof value === "string") return JSON.stringify(value).length
  if (typeof value === "number") return Number.isFinite(value) ? String(value).length : 4
  if (typeof value === "boolean") return value ? 4 : 5
  return 4 // null, and anything JSON.stringify would write as null
}

/** What `JSON.stringify(value).length` would be, if it is within `bounds`. Values from JSON.parse only. */
export const measureJson = (value: unknown, bounds: JsonBounds): JsonMeasure => {
  let chars = 0
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const next = stack.pop()
    if (next === undefined) break
    const current = next.value
    if (typeof current === "object" && current !== null) {
      const depth = next.depth + 1
      if (depth > bounds.maxDepth) return { ok: false, reason: "too_deep" }
      if (Array.isArray(current)) {
        chars += 2 + Math.max(current.length - 1, 0)
        for (const item of current) stack.push({ value: item, depth })
      } else {
        const entries = Object.entries(current).filter(([, child]) => child !== undefined)
        chars += 2 + Math.max(entries.length - 1, 0)
        for (const [key, child] of entries) {
          chars += JSON.stringify(key).length + 1
          stack.push({ value: child, depth })
        }
      }
    } else {
      chars += scalarChars(current)
    }
    if (chars > bounds.maxChars) return { ok: false, reason: "too_large" }
  }
  return { ok: true, chars }
}
