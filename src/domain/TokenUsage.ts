import { Data } from "effect"

/** Provider-reported token counts for one pass; a turn's usage is the sum over its passes. */
export interface TokenUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  readonly totalTokens: number
}

export const TokenUsage = Data.case<TokenUsage>()

export const addUsage = (a: TokenUsage | undefined, b: TokenUsage | undefined): TokenUsage | undefined =>
  a === undefined
    ? b
    : b === undefined
    ? a
    : TokenUsage({
      inputTokens: a.inputTokens + b.inputTokens,
      outputTokens: a.outputTokens + b.outputTokens,
      totalTokens: a.totalTokens + b.totalTokens
    })
