/**
 * What the context budget did in a turn, for the `--once --json` report, the logs and the
 * metrics. Counts are of distinct items over the turn's passes (an old result elided on every
 * later pass counts once).
 */
export interface ContextReport {
  /** The model's window in tokens (prompt and output); null when none is known or needed. */
  readonly window: number | null
  /** Where the window came from: learned (a refusal), setting, discovered, table, default. */
  readonly windowSource: string | null
  /** Prompt tokens the provider reported for the last pass (null when it reported none). */
  readonly promptTokens: number | null
  /**
   * loopcord's calibrated estimate of the last request it counted (tokens); null when every
   * request was within the window by its characters alone and was not counted.
   */
  readonly estimatedPromptTokens: number | null
  readonly elided: {
    /** Older tool results shown as head and tail. */
    readonly toolResults: number
    /** Older tool exchanges left out whole or replaced by a summary. */
    readonly toolExchanges: number
    readonly historyMessages: number
    /** Older messages whose images were left out. */
    readonly historyImages: number
    /** Newest tool results cut to fit. */
    readonly cutToolResults: number
  }
  /** The message being answered was cut: how much of it the model saw. */
  readonly cutUserMessage: { readonly keptChars: number; readonly totalChars: number } | null
  /** Context-length refusals the provider answered (each was retried smaller or ended the attempt). */
  readonly overflowRefusals: number
  /** Summaries the model wrote of older exchanges (CONTEXT_COMPACTION=summarize). */
  readonly summaries: number
}

/** Every elided or cut item of a report, one number. */
export const elidedItems = (report: ContextReport): number =>
  report.elided.toolResults + report.elided.toolExchanges + report.elided.historyMessages + report.elided.historyImages +
  report.elided.cutToolResults + (report.cutUserMessage === null ? 0 : 1)

/** A turn's report over its attempts: the last attempt's window and prompt, every attempt's counts. */
export const mergeContextReports = (reports: ReadonlyArray<ContextReport | undefined>): ContextReport | undefined => {
  const known = reports.filter((report): report is ContextReport => report !== undefined)
  const last = known[known.length - 1]
  if (last === undefined) return undefined
  const sum = (pick: (report: ContextReport) => number) => known.reduce((total, report) => total + pick(report), 0)
  return {
    ...last,
    elided: {
      toolResults: sum((r) => r.elided.toolResults),
      toolExchanges: sum((r) => r.elided.toolExchanges),
      historyMessages: sum((r) => r.elided.historyMessages),
      historyImages: sum((r) => r.elided.historyImages),
      cutToolResults: sum((r) => r.elided.cutToolResults)
    },
    cutUserMessage: [...known].reverse().find((report) => report.cutUserMessage !== null)?.cutUserMessage ?? null,
    overflowRefusals: sum((r) => r.overflowRefusals),
    summaries: sum((r) => r.summaries)
  }
}
