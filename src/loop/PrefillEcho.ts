/**
 * Fallback continuation guard (design §2 decision 4). A replacement attempt is given the text
 * already delivered as the start of its answer and must continue it. Some models repeat that
 * text anyway; this filter drops the repeat so the user never sees it twice. Output still held
 * when the pass ends was the start of a repeat and is dropped. Short prefills are
 * not guarded: a genuine continuation can plausibly start with a few identical characters.
 */
export const MIN_GUARDED_PREFILL = 12

export interface PrefillEcho {
  /** What is still compared against (empty once the guard is done). */
  readonly prefill: string
  /** Output held back while it matches a prefix of `prefill`. */
  readonly held: string
}

export const startEcho = (prefill: string | undefined): PrefillEcho => ({
  prefill: prefill !== undefined && prefill.trim().length >= MIN_GUARDED_PREFILL ? prefill.trimStart() : "",
  held: ""
})

const done: PrefillEcho = { prefill: "", held: "" }

/**
 * Feeds one delta; returns what may be delivered now and the next state. Leading whitespace
 * of the model's output is ignored while comparing (models often restart with a space).
 */
export const feedEcho = (state: PrefillEcho, delta: string): readonly [string, PrefillEcho] => {
  if (state.prefill.length === 0) return [delta, state]
  const candidate = state.held + delta
  const compared = candidate.trimStart()
  if (compared.length === 0) return ["", { ...state, held: candidate }]
  if (state.prefill.startsWith(compared)) {
    // Still a (partial) repeat: hold it; a complete repeat is dropped.
    return compared.length === state.prefill.length ? ["", done] : ["", { ...state, held: candidate }]
  }
  if (compared.startsWith(state.prefill)) return [compared.slice(state.prefill.length), done]
  // Diverged: it was a genuine continuation, release everything held.
  return [candidate, done]
}
