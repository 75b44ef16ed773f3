import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"

/**
 * A group of tool history entries the provider replays together: one assistant turn with every
 * call, then one result per call. The context budget works on exchanges, never on single
 * entries, so a call is never separated from its result: an exchange is kept, shortened (its
 * results) or left out whole.
 */
export interface Exchange {
  readonly entries: ReadonlyArray<ToolHistoryEntry>
}

/**
 * The turn's history as exchanges, oldest first. A pass replays one call today, so each entry
 * is its own exchange; passes with several calls group their entries here.
 */
export const exchangesOf = (history: ReadonlyArray<ToolHistoryEntry>): ReadonlyArray<Exchange> =>
  history.map((entry) => ({ entries: [entry] }))

export const entriesOf = (exchanges: ReadonlyArray<Exchange>): ReadonlyArray<ToolHistoryEntry> =>
  exchanges.length === 1 ? exchanges[0]!.entries : exchanges.flatMap((exchange) => exchange.entries)
