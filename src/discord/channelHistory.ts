import type { Message, TextBasedChannel } from "discord.js"
import { Effect } from "effect"
import { withLane } from "./budgetedRest"
import type { HistoryCoverageState } from "./HistoryCoverage"
import type { RequestBudgetService } from "./RequestBudget"

/** A channel's newest messages, as the cache has them or as Discord answers (where they come from is said). */
interface RecentMessages {
  readonly messages: ReadonlyArray<Message>
  readonly source: "cache" | "discord"
}

const newestFirst = (a: Message, b: Message) => (BigInt(a.id) > BigInt(b.id) ? -1 : 1)

/**
 * A message the history can read. A gateway event with fields missing still becomes a cached
 * discord.js Message (without an author, say); read as history it would fail every later turn
 * of its channel, so it is left out.
 */
const isReadable = (message: Message): boolean => {
  const author: unknown = message.author
  return typeof author === "object" && author !== null && typeof message.content === "string" && /^\d+$/.test(message.id)
}

/**
 * The newest `limit` messages of `channel`. From discord.js's cache when the coverage says the
 * cache holds them all (the gateway keeps it current); else read from Discord as background
 * work (it yields to replies when the request budget is short), which covers the channel for
 * the next turns. A failed read fails (the caller decides what a turn without history does).
 */
export const recentMessages = (
  channel: TextBasedChannel,
  limit: number,
  coverage: HistoryCoverageState,
  budget: RequestBudgetService
): Effect.Effect<RecentMessages, Error> =>
  Effect.suspend(() => {
    const from = coverage.coveredFrom(channel.id)
    if (from !== undefined) {
      const cached = [...channel.messages.cache.values()].filter((message) => isReadable(message) && BigInt(message.id) >= from).sort(newestFirst)
      if (from === 0n || cached.length >= limit) return Effect.succeed<RecentMessages>({ messages: cached.slice(0, limit), source: "cache" })
    }
    coverage.reading(channel.id)
    return withLane(
      budget,
      "background",
      () => channel.messages.fetch({ limit, cache: true }),
      (error) => (error instanceof Error ? error : new Error(String(error)))
    ).pipe(
      Effect.tap((fetched) =>
        Effect.sync(() => {
          const ids = [...fetched.keys()].map(BigInt)
          const oldest = ids.reduce((min, id) => (id < min ? id : min), ids[0] ?? 0n)
          coverage.read(channel.id, fetched.size < limit ? 0n : oldest)
        })
      ),
      Effect.tapError(() => Effect.sync(() => coverage.failed(channel.id))),
      Effect.onInterrupt(() => Effect.sync(() => coverage.failed(channel.id))),
      Effect.map((fetched): RecentMessages => ({ messages: [...fetched.values()].filter(isReadable).sort(newestFirst), source: "discord" }))
    )
  })
