import { Predicate } from "effect"
import type { OverflowFacts } from "../domain/ProviderError"

/**
 * Recognises a refusal because the request is longer than the model's window, from what each
 * vendor sends (the error body of a non-2xx answer, or an error event inside a stream), and reads
 * the window and the counted prompt out of it where the vendor says them:
 *
 * - OpenAI / DeepSeek / Groq: `code: "context_length_exceeded"`, "This model's maximum context
 *   length is 128000 tokens. However, your messages resulted in 130000 tokens…";
 * - Anthropic: "prompt is too long: 208310 tokens > 200000 maximum", or "input length and
 *   `max_tokens` exceed context limit: 197000 + 21333 > 200000…";
 * - Gemini: `INVALID_ARGUMENT`, "The input token count (1048580) exceeds the maximum number of
 *   tokens allowed (1048576).";
 * - llama.cpp: `type: "exceed_context_size_error"` with `n_prompt_tokens` and `n_ctx`, or the
 *   older "the request exceeds the available context size";
 * - vLLM / OpenRouter: "maximum context length is 32768 tokens. However, you requested 33000
 *   tokens…";
 * - Mistral: "Prompt contains 40000 tokens … too large for model with 32768 maximum context
 *   length"; LM Studio: "…loaded with context length of only 4096 tokens…".
 *
 * Pure; the body is untrusted, so only bounded prefixes of it are matched.
 */

/** Messages longer than this are matched on their start only (a body can be large). */
const MAX_MATCHED_CHARS = 4_000

/** A window outside this range is not believed (a misparse, or a hostile body). */
const MIN_WINDOW = 256
const MAX_WINDOW = 100_000_000

const OVERFLOW_PATTERNS: ReadonlyArray<RegExp> = [
  /maximum context length/i,
  /context[_ ]length[_ ]exceeded/i,
  /prompt is too long/i,
  /exceeds? (?:the )?(?:available )?context (?:limit|size|window|length)/i,
  /input token count.{0,40}exceeds the maximum number of tokens/i,
  /too large for model with \d+ maximum context length/i,
  /context length of only \d+ tokens/i,
  /exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context window/i,
  /(?:reduce|shorten) the length of the (?:messages|prompt|input)/i
]

const OVERFLOW_CODES = new Set(["context_length_exceeded", "exceed_context_size_error", "context_window_exceeded", "string_above_max_length"])

const toNumber = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const value = Number(text.replace(/[,_]/g, ""))
  return Number.isSafeInteger(value) && value > 0 ? value : undefined
}

const plausibleWindow = (value: number | undefined): number | undefined =>
  value !== undefined && value >= MIN_WINDOW && value <= MAX_WINDOW ? value : undefined

const plausibleCount = (value: number | undefined): number | undefined =>
  value !== undefined && value > 0 && value <= MAX_WINDOW * 10 ? value : undefined

const NUMBER = "(\\d[\\d,_]*)"

/** `[pattern, which group is the window, which is the prompt count]`, tried in order. */
const FACT_PATTERNS: ReadonlyArray<readonly [RegExp, number | undefined, number | undefined]> = [
  [new RegExp(`prompt is too long: ${NUMBER} tokens > ${NUMBER}`, "i"), 2, 1],
  [new RegExp(`context limit: ${NUMBER} \\+ ${NUMBER} > ${NUMBER}`, "i"), 3, 1],
  [new RegExp(`input token count \\(?${NUMBER}\\)? exceeds the maximum number of tokens allowed \\(?${NUMBER}\\)?`, "i"), 2, 1],
  [new RegExp(`prompt contains ${NUMBER} tokens.{0,80}?model with ${NUMBER} maximum context length`, "i"), 2, 1],
  [new RegExp(`context length of only ${NUMBER} tokens`, "i"), 1, undefined],
  [new RegExp(`maximum context length is ${NUMBER} tokens`, "i"), 1, undefined],
  [new RegExp(`context window of ${NUMBER} tokens`, "i"), 1, undefined],
  [new RegExp(`(?:resulted in|requested(?: about)?|contains?) ${NUMBER} tokens`, "i"), undefined, 1]
]

/** Window and prompt count stated in a refusal's text, where it states them. */
export const overflowFactsOf = (message: string): OverflowFacts => {
  const text = message.slice(0, MAX_MATCHED_CHARS)
  let window: number | undefined
  let promptTokens: number | undefined
  for (const [pattern, windowGroup, promptGroup] of FACT_PATTERNS) {
    const match = pattern.exec(text)
    if (match === null) continue
    window ??= windowGroup === undefined ? undefined : plausibleWindow(toNumber(match[windowGroup]))
    promptTokens ??= promptGroup === undefined ? undefined : plausibleCount(toNumber(match[promptGroup]))
  }
  return { ...(window === undefined ? {} : { window }), ...(promptTokens === undefined ? {} : { promptTokens }) }
}

/** The error object of a vendor body: `{error:{…}}`, `[{error:{…}}]` or the body itself. */
const errorObject = (payload: unknown): Record<string, unknown> | undefined => {
  const root = Array.isArray(payload) ? payload[0] : payload
  if (!Predicate.isObject(root)) return undefined
  return Predicate.isObject(root.error) ? root.error : root
}

/**
 * The facts of a context-length refusal, or undefined when the error is something else.
 * `payload` is the parsed error body (or stream error event), `message` its human text.
 */
export const contextOverflowOf = (payload: unknown, message: string | undefined): OverflowFacts | undefined => {
  const error = errorObject(payload)
  const labels = [error?.code, error?.type, error?.status].filter((part): part is string => typeof part === "string")
  const text = (message ?? "").slice(0, MAX_MATCHED_CHARS)
  const byCode = labels.some((label) => OVERFLOW_CODES.has(label.toLowerCase()))
  if (!byCode && !OVERFLOW_PATTERNS.some((pattern) => pattern.test(text))) return undefined
  const stated = overflowFactsOf(text)
  // llama.cpp says the numbers as fields, not in the text.
  const window = stated.window ?? plausibleWindow(typeof error?.n_ctx === "number" ? error.n_ctx : undefined)
  const promptTokens = stated.promptTokens ?? plausibleCount(typeof error?.n_prompt_tokens === "number" ? error.n_prompt_tokens : undefined)
  return { ...(window === undefined ? {} : { window }), ...(promptTokens === undefined ? {} : { promptTokens }) }
}
