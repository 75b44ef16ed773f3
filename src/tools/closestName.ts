/**
 * "Did you mean …?" for unknown tool names: the closest candidate by
 * Levenshtein distance, compared case-insensitively, when it is reasonably close.
 */

/** Edit distance (insertions, deletions, substitutions) between two strings. */
export const levenshtein = (a: string, b: string): number => {
  if (a === b) return 0
  if (a.length === 0) return b.length
  if (b.length === 0) return a.length
  // Two rows are enough: row i only depends on row i - 1.
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1)
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution))
    }
    previous = current
  }
  return previous[b.length] ?? 0
}

/**
 * Farther than this is a different word, not a typo: a third of the longer name, at least 2
 * (so `web_serch` → `web_search`, `fetchurl` → `fetch_url`, but not `ping` → `web_search`).
 */
const maxDistance = (a: string, b: string): number => Math.max(2, Math.floor(Math.max(a.length, b.length) / 3))

/** The closest candidate to `name`, or undefined when none is reasonably close. Ties keep the first. */
export const closestName = (name: string, candidates: Iterable<string>): string | undefined => {
  const wanted = name.toLowerCase()
  let best: { readonly name: string; readonly distance: number } | undefined
  for (const candidate of candidates) {
    const distance = levenshtein(wanted, candidate.toLowerCase())
    if (distance <= maxDistance(wanted, candidate) && (best === undefined || distance < best.distance)) {
      best = { name: candidate, distance }
    }
  }
  return best?.name
}
