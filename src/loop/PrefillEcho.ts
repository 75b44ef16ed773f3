/**
 * Fallback continuation guard. A replacement attempt is
 * given the text already delivered as the start of its answer and must continue it. Servers
 * and models often restart instead: the whole reply again (a vLLM that ignores the trailing
 * assistant message), or its last words ("…Paris is" ⇒ "Paris is the capital"). This filter
 * strips that overlap, so the user never sees a word twice: the output is held while it still
 * reads as a restart from some word of the delivered text, then whatever repeated the end of
 * the delivered text is dropped. Output still held when the pass ends was a repeat and is
 * dropped. Overlaps shorter than `MIN_GUARDED_PREFILL` characters are kept: a genuine
 * continuation can plausibly start with a few identical characters.
 */
export const MIN_GUARDED_PREFILL = 12

/** Restarts are looked for from word starts in the last this-many characters (and at the very start). */
const OVERLAP_WINDOW = 2000

interface PrefillEcho {
  /** The delivered text compared against (empty once the guard is done). */
  readonly prefill: string
  /** Output held back while it may be a restart. */
  readonly held: string
  /** Offsets in `prefill` where a restart may begin and that still agree with `held`. */
  readonly starts: ReadonlyArray<number>
  /** The delivered text ended in whitespace (trimmed from `prefill`), so what follows a restart needs none. */
  readonly spaced: boolean
}

const done: PrefillEcho = { prefill: "", held: "", starts: [], spaced: false }

const isSpace = (char: string | undefined) => char !== undefined && /\s/.test(char)

/** Word starts whose suffix is long enough to count as an overlap. */
const restartOffsets = (prefill: string): ReadonlyArray<number> => {
  const offsets: Array<number> = [0]
  const from = Math.max(1, prefill.length - OVERLAP_WINDOW)
  for (let offset = from; offset <= prefill.length - MIN_GUARDED_PREFILL; offset++) {
    if (isSpace(prefill[offset - 1]) && !isSpace(prefill[offset])) offsets.push(offset)
  }
  return offsets
}

export const startEcho = (prefill: string | undefined): PrefillEcho => {
  const text = prefill?.trim() ?? ""
  return text.length < MIN_GUARDED_PREFILL
    ? done
    : { prefill: text, held: "", starts: restartOffsets(text), spaced: /\s$/.test(prefill ?? "") }
}

/**
 * Feeds one delta; returns what may be delivered now and the next state. Leading whitespace
 * of the model's output is ignored while comparing (models often restart with a space).
 */
export const feedEcho = (state: PrefillEcho, delta: string): readonly [string, PrefillEcho] => {
  if (state.prefill.length === 0) return [delta, state]
  const candidate = state.held + delta
  const compared = candidate.trimStart()
  if (compared.length === 0) return ["", { ...state, held: candidate }]
  const { prefill } = state
  // A restart from `offset` is still possible while the output reads the prefill from there.
  const pending = state.starts.filter((offset) => compared.length < prefill.length - offset && prefill.startsWith(compared, offset))
  if (pending.length > 0) return ["", { ...state, held: candidate, starts: pending }]
  // Otherwise the longest restart the output completed is the overlap to drop.
  const completed = state.starts.find((offset) => compared.startsWith(prefill.slice(offset)))
  if (completed !== undefined) {
    const rest = compared.slice(prefill.length - completed)
    return [state.spaced ? rest.trimStart() : rest, done]
  }
  // Diverged from every restart: it was a genuine continuation, release everything held.
  return [candidate, done]
}
