/** Provider-reported token counts for one pass. */
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
