import { type CacheFactory, type ClientOptions, type Collection, LimitedCollection, type Message, Options } from "discord.js"
import type { HistoryCoverageState } from "./HistoryCoverage"
import { lazyCollection } from "./lazyCollection"

/**
 * What discord.js keeps in memory. A shard of thousands of guilds must stay small when idle, so
 * only what the bot reads is cached, and that within bounds:
 * - messages: the last MESSAGES_PER_CHANNEL of each channel (a turn reads 20 of history and
 *   the message it replies to), swept after an hour;
 * - members: a few per guild (display names in history; the bot's own member is always kept,
 *   its permissions need it); users likewise, the bot's own kept;
 * - guilds, channels, roles, stickers, threads: whole (permissions, mentions, sticker choice);
 * - emojis, presences, voice states, reactions, invites, bans, scheduled events, stage
 *   instances, thread members, automod rules: none (the bot never reads them).
 * Every cache is made on its first write (lazyCollection): most of a channel's and a guild's
 * caches stay empty, and an empty Map still costs its hash table. The caches that keep nothing
 * are one shared collection.
 */
export const MESSAGES_PER_CHANNEL = 50
const MEMBERS_PER_GUILD = 10
const MAX_CACHED_USERS = 5_000
/** Messages older than this are swept (every SWEEP_INTERVAL_SECONDS). */
const MESSAGE_LIFETIME_SECONDS = 3_600
const SWEEP_INTERVAL_SECONDS = 600

/** A channel's message cache that tells the history coverage what it drops (size limit, sweeps). */
export class CoverageAwareMessages extends LimitedCollection<string, Message> {
  constructor(private readonly onDropped: (message: Message) => void, maxSize = MESSAGES_PER_CHANNEL) {
    super({ maxSize })
  }

  override set(key: string, value: Message): this {
    if (this.size >= this.maxSize && !this.has(key)) {
      // LimitedCollection drops its oldest entry to make room.
      const oldest = this.values().next()
      if (oldest.done !== true) this.onDropped(oldest.value)
    }
    return super.set(key, value)
  }

  override sweep(fn: (value: Message, key: string, collection: this) => unknown): number {
    return super.sweep((value, key, collection) => {
      const swept = Boolean(fn(value, key, collection))
      if (swept) this.onDropped(value)
      return swept
    })
  }
}

const isClientUser = (entry: { readonly id: string; readonly client: { readonly user: { readonly id: string } | null } }) => entry.id === entry.client.user?.id

type AnyCollection = Collection<unknown, unknown>

/** discord.js's cache factory with the limits above; message caches report to `coverage`. */
const makeClientCache = (coverage: HistoryCoverageState): CacheFactory => {
  const limited = Options.cacheWithLimits({
    GuildMemberManager: { maxSize: MEMBERS_PER_GUILD, keepOverLimit: isClientUser },
    UserManager: { maxSize: MAX_CACHED_USERS, keepOverLimit: isClientUser },
    BaseGuildEmojiManager: 0,
    GuildEmojiManager: 0,
    PresenceManager: 0,
    VoiceStateManager: 0,
    ReactionManager: 0,
    ReactionUserManager: 0,
    GuildInviteManager: 0,
    GuildBanManager: 0,
    GuildScheduledEventManager: 0,
    StageInstanceManager: 0,
    ThreadMemberManager: 0,
    AutoModerationRuleManager: 0
  })
  const onDropped = (message: Message) => coverage.dropped(message.channelId, message.id)
  const messages = () => new CoverageAwareMessages(onDropped)
  // The arguments are classes (the manager's and what it holds), so one cache kind per pair:
  // either the shared cache that keeps nothing, or how to make the real one.
  const kinds = new Map<Function, Map<Function, AnyCollection | (() => AnyCollection)>>()
  const kindOf = (...args: Parameters<CacheFactory>): AnyCollection | (() => AnyCollection) => {
    const [managerType, , manager] = args
    const byManager = kinds.get(managerType) ?? new Map<Function, AnyCollection | (() => AnyCollection)>()
    kinds.set(managerType, byManager)
    const known = byManager.get(manager)
    if (known !== undefined) return known
    const sample = limited(...args) as AnyCollection
    const kind = sample instanceof LimitedCollection && sample.maxSize === 0 && sample.keepOverLimit === null ? sample : () => limited(...args) as AnyCollection
    byManager.set(manager, kind)
    return kind
  }
  const factory = (...args: Parameters<CacheFactory>) => {
    const [managerType, , manager] = args
    if (managerType.name === "MessageManager" || manager.name === "GuildMessageManager" || manager.name === "DMMessageManager") {
      return lazyCollection(messages)
    }
    const kind = kindOf(...args)
    return typeof kind === "function" ? lazyCollection(kind) : kind
  }
  return factory as CacheFactory
}

/** The client options for caching: the factory above and sweepers for old messages (threads as discord.js does). */
export const cacheOptions = (coverage: HistoryCoverageState): Pick<ClientOptions, "makeCache" | "sweepers"> => ({
  makeCache: makeClientCache(coverage),
  sweepers: {
    ...Options.DefaultSweeperSettings,
    messages: { interval: SWEEP_INTERVAL_SECONDS, lifetime: MESSAGE_LIFETIME_SECONDS }
  }
})
