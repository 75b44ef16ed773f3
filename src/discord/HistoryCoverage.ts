import { Context, Layer } from "effect"

/** Channels whose coverage is remembered at most; beyond, the oldest is forgotten (it costs a history read). */
const MAX_COVERED_CHANNELS = 10_000

interface Coverage {
  /** Every message of the channel with an id at least this is in discord.js's cache (0n: every message). */
  readonly from: bigint
  /** A history read is filling it: messages dropped meanwhile are tracked, but it is not trusted yet. */
  readonly settled: boolean
}

/**
 * Which channels discord.js's message cache holds completely, from which message on, so a
 * turn reads its history from the cache instead of asking Discord again. A channel becomes
 * covered by a history read (from the oldest message it returned, or from the start when it
 * returned fewer than asked) or by being empty when the bot first saw it; the gateway keeps the
 * cache current after that. A message the cache drops (its size limit, the sweeper) moves the
 * coverage past it; a gateway session that ended (events may have been missed) forgets all.
 *
 * Mutated from discord.js's synchronous cache and event callbacks, so it is a plain object whose
 * every method runs to completion without yielding (nothing interleaves with an update).
 */
export class HistoryCoverageState {
  private readonly channels = new Map<string, Coverage>()

  constructor(private readonly maxChannels = MAX_COVERED_CHANNELS) {}

  /** Where the cache of `channelId` is complete from; undefined when it is not known to be. */
  coveredFrom(channelId: string): bigint | undefined {
    const coverage = this.channels.get(channelId)
    return coverage?.settled === true ? coverage.from : undefined
  }

  /** The channel is empty (new, or seen with no last message): the cache holds all of it. */
  empty(channelId: string): void {
    if (!this.channels.has(channelId)) this.put(channelId, { from: 0n, settled: true })
  }

  /** A history read starts: drops from now on are tracked (the read itself may evict). */
  reading(channelId: string): void {
    this.put(channelId, { from: 0n, settled: false })
  }

  /** The read returned: the cache is complete from `oldestId` (0n: the read reached the channel's start). */
  read(channelId: string, oldestId: bigint): void {
    const during = this.channels.get(channelId)
    this.put(channelId, { from: during === undefined ? oldestId : (during.from > oldestId ? during.from : oldestId), settled: true })
  }

  /** The read failed: nothing is known. */
  failed(channelId: string): void {
    this.channels.delete(channelId)
  }

  /** The cache dropped message `messageId` of `channelId`: only later messages are still all there. */
  dropped(channelId: string, messageId: string): void {
    const coverage = this.channels.get(channelId)
    if (coverage === undefined) return
    const after = BigInt(messageId) + 1n
    if (after > coverage.from) this.channels.set(channelId, { ...coverage, from: after })
  }

  /** A gateway session ended: events may have been missed in every channel. */
  lost(): void {
    this.channels.clear()
  }

  get size(): number {
    return this.channels.size
  }

  private put(channelId: string, coverage: Coverage): void {
    this.channels.delete(channelId)
    this.channels.set(channelId, coverage)
    for (const key of this.channels.keys()) {
      if (this.channels.size <= this.maxChannels) break
      this.channels.delete(key)
    }
  }
}

export class HistoryCoverage extends Context.Service<HistoryCoverage, HistoryCoverageState>()("loopcord/discord/HistoryCoverage") {
  static readonly layer = Layer.sync(HistoryCoverage, () => new HistoryCoverageState())
}
