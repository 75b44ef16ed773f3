/**
 * Provider-reported token counts for one pass; a turn's usage is the sum over its passes.
 * `inputTokens` counts every input token, cached ones included; the three detail counts are
 * parts of the totals and are present only when the vendor reports them:
 * - `cachedInputTokens`: input read from the vendor's prompt cache (OpenAI `cached_tokens`,
 *   Anthropic `cache_read_input_tokens`, Gemini `cachedContentTokenCount`);
 * - `cacheWriteTokens`: input written to the prompt cache (Anthropic `cache_creation_input_tokens`);
 * - `reasoningTokens`: output spent on hidden reasoning (OpenAI `reasoning_tokens`, Gemini
 *   `thoughtsTokenCount`).
 */
export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
  readonly cachedInputTokens?: number
  readonly cacheWriteTokens?: number
  readonly reasoningTokens?: number
}

export const TokenUsage = (usage: TokenUsage): TokenUsage => ({ ...usage })

/** A detail count worth keeping: a finite positive number (vendors send 0 or null when there is none). */
const detail = (value: number | null | undefined): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value > 0 ? value : undefined

/** Builds a usage from vendor counts; detail counts that are absent, null or 0 are left out. */
export const makeUsage = (counts: {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens?: number | null | undefined
  readonly cachedInputTokens?: number | null | undefined
  readonly cacheWriteTokens?: number | null | undefined
  readonly reasoningTokens?: number | null | undefined
}): TokenUsage => {
  const cachedInputTokens = detail(counts.cachedInputTokens)
  const cacheWriteTokens = detail(counts.cacheWriteTokens)
  const reasoningTokens = detail(counts.reasoningTokens)
  return TokenUsage({
    inputTokens: counts.inputTokens,
    outputTokens: counts.outputTokens,
    totalTokens: counts.totalTokens ?? counts.inputTokens + counts.outputTokens,
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens }),
    ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
    ...(reasoningTokens === undefined ? {} : { reasoningTokens })
  })
}

const sumDetail = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : a + b

export const addUsage = (a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined => {
  if (a === undefined) return b
  if (b === undefined) return a
  const cachedInputTokens = sumDetail(a.cachedInputTokens, b.cachedInputTokens)
  const cacheWriteTokens = sumDetail(a.cacheWriteTokens, b.cacheWriteTokens)
  const reasoningTokens = sumDetail(a.reasoningTokens, b.reasoningTokens)
  return TokenUsage({
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
    ...(cachedInputTokens === undefined ? {} : { cachedInputTokens }),
    ...(cacheWriteTokens === undefined ? {} : { cacheWriteTokens }),
    ...(reasoningTokens === undefined ? {} : { reasoningTokens })
  })
}
