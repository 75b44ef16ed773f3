import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import { exchangesOf as replayedExchanges } from "../../provider/toolReplay"

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
 * The turn's history as exchanges, oldest first, grouped exactly as the providers replay it:
 * the calls one pass made (consecutive entries of one `batch`) are one exchange; an entry
 * without a batch is its own.
 */
export const exchangesOf = (history: ReadonlyArray<ToolHistoryEntry>): ReadonlyArray<Exchange> =>
  replayedExchanges(history).map((exchange) => ({ entries: exchange.entries }))

export const entriesOf = (exchanges: ReadonlyArray<Exchange>): ReadonlyArray<ToolHistoryEntry> =>
  exchanges.length === 1 ? exchanges[0]!.entries : exchanges.flatMap((exchange) => exchange.entries)
