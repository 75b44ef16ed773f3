import { Predicate } from "effect"
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"

/**
 * How tool history is replayed, the same for every provider: the calls one pass made together
 * (a batch) go back as one assistant turn, with the pass's pre-tool text, followed by one result
 * per call; each result is sent once (a `data.summary` string is preferred, so fetch_url's page
 * is not sent twice as message and data).
 */

/** Text this pass posted before the call, or undefined when blank. */
export const preToolText = (entry: ToolHistoryEntry): string | undefined => {
  const text = (entry.preToolCallTextParts ?? []).map((part) => part.text).join("")
  return text.trim().length > 0 ? text : undefined
}

/** The result as a string: `summary` when the result is an object with a string summary, else its JSON. */
export const toolResultText = (entry: ToolHistoryEntry): string => {
  const result = entry.functionResponse.response.result
  if (Predicate.isObject(result) && typeof result.summary === "string") return result.summary
  if (typeof result === "string") return result
  return JSON.stringify(result ?? null) ?? "null"
}

/** The result as a JSON value for providers that take structured results (Gemini). */
export const toolResultValue = (entry: ToolHistoryEntry): unknown => {
  const result = entry.functionResponse.response.result
  return Predicate.isObject(result) && typeof result.summary === "string" ? result.summary : result
}

/** Arguments as the model wrote them (a refused truncated call has none left: `{}`). */
export const callArguments = (entry: ToolHistoryEntry): Readonly<Record<string, unknown>> =>
  entry.functionCall.args ?? {}

/** Image URLs a tool posted, replayed to vision models next to its result. */
export const toolImages = (entry: ToolHistoryEntry): ReadonlyArray<{ readonly url: string; readonly mimeType?: string }> =>
  entry.imageMetadata?.imageUrls ?? []

/** What the vendors accept as a call id (OpenAI's rule is the strictest). */
const validCallId = /^[A-Za-z0-9_-]{1,64}$/

/**
 * One call id per entry of the history, unique in the request: the provider's own when it is
 * valid and not taken yet, else one derived from the position (`call_3`). A server that gave two
 * calls of one pass the same id, or none, still gets every result paired with its own call.
 */
export const callIdsOf = (history: ReadonlyArray<ToolHistoryEntry>, prefix: string): ReadonlyArray<string> => {
  const used = new Set<string>()
  return history.map((entry, position) => {
    const own = entry.functionCall.id
    let id = own !== undefined && validCallId.test(own) && !used.has(own) ? own : `${prefix}${position + 1}`
    // A derived id a provider's own id already took (`call_2` given by the server).
    for (let attempt = 2; used.has(id); attempt += 1) id = `${prefix}${position + 1}_${attempt}`
    used.add(id)
    return id
  })
}

/** The entries one assistant turn replays: every call of one pass, then one result per call. */
export interface ReplayExchange {
  readonly entries: ReadonlyArray<ToolHistoryEntry>
  /** Each entry's call id (`callIdsOf`), in the same order. */
  readonly ids: ReadonlyArray<string>
  /** Text the pass posted before its calls (kept on the batch's first entry), or undefined when blank. */
  readonly preToolText: string | undefined
}

/**
 * The history grouped into the assistant turns it replays, oldest first: consecutive entries with
 * the same `batch` are one turn; an entry without a `batch` (older records) is its own.
 */
export const exchangesOf = (history: ReadonlyArray<ToolHistoryEntry>, idPrefix = "call_"): ReadonlyArray<ReplayExchange> => {
  const ids = callIdsOf(history, idPrefix)
  const exchanges: Array<ReplayExchange> = []
  let start = 0
  while (start < history.length) {
    const batch = history[start]!.batch
    let end = start + 1
    if (batch !== undefined) while (end < history.length && history[end]!.batch === batch) end += 1
    exchanges.push({ entries: history.slice(start, end), ids: ids.slice(start, end), preToolText: preToolText(history[start]!) })
    start = end
  }
  return exchanges
}
