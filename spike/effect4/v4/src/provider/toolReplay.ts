// Copied from src/provider/toolReplay.ts unchanged (it uses no Effect API), but for comments that cited documents outside the repository.
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"

/**
 * How a tool history entry is replayed, the same for every provider: the pre-tool text goes
 * into the assistant turn that made the call, and the result is sent once (a `data.summary`
 * string is preferred, so fetch_url's page is not sent twice as message and data).
 */

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Text this pass posted before the call, or undefined when blank. */
export const preToolText = (entry: ToolHistoryEntry): string | undefined => {
  const text = (entry.preToolCallTextParts ?? []).map((part) => part.text).join("")
  return text.trim().length > 0 ? text : undefined
}

/** The result as a string: `summary` when the result is an object with a string summary, else its JSON. */
export const toolResultText = (entry: ToolHistoryEntry): string => {
  const result = entry.functionResponse.response.result
  if (isRecord(result) && typeof result.summary === "string") return result.summary
  if (typeof result === "string") return result
  return JSON.stringify(result ?? null) ?? "null"
}

/** The result as a JSON value for providers that take structured results (Gemini). */
export const toolResultValue = (entry: ToolHistoryEntry): unknown => {
  const result = entry.functionResponse.response.result
  return isRecord(result) && typeof result.summary === "string" ? result.summary : result
}

/** Arguments as the model wrote them (a refused truncated call has none left: `{}`). */
export const callArguments = (entry: ToolHistoryEntry): Readonly<Record<string, unknown>> =>
  entry.functionCall.args ?? {}

/** A stable call id: the provider's own, or one derived from the position in the history. */
export const callId = (entry: ToolHistoryEntry, position: number, prefix: string): string =>
  entry.functionCall.id !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(entry.functionCall.id)
    ? entry.functionCall.id
    : `${prefix}${position + 1}`

/** Image URLs a tool posted, replayed to vision models next to its result. */
export const toolImages = (entry: ToolHistoryEntry): ReadonlyArray<{ readonly url: string; readonly mimeType?: string }> =>
  entry.imageMetadata?.imageUrls ?? []
