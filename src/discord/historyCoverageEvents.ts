import { ChannelType, type Client, Events, type Guild, type NonThreadGuildBasedChannel, type ThreadChannel } from "discord.js"
import { Effect, type Scope } from "effect"
import type { HistoryCoverageState } from "./HistoryCoverage"

/** A text channel seen with no message in it: the cache holds all of its history. */
const isEmptyTextChannel = (channel: { readonly isTextBased: () => boolean; readonly lastMessageId?: string | null }) =>
  channel.isTextBased() && channel.lastMessageId === null

/**
 * Keeps the coverage true to the gateway: a guild's empty text channels are covered from the
 * start when the guild arrives, as are channels and threads created later; a gateway session
 * that ends (a resume replays what was missed; a new session does not) forgets every channel.
 * Listeners are removed when the scope closes.
 */
export const trackHistoryCoverage = (client: Client, coverage: HistoryCoverageState): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const onGuild = (guild: Guild) => {
        for (const channel of guild.channels.cache.values()) if (isEmptyTextChannel(channel)) coverage.empty(channel.id)
      }
      const onChannel = (channel: NonThreadGuildBasedChannel) => {
        if (channel.type !== ChannelType.GuildCategory && isEmptyTextChannel(channel)) coverage.empty(channel.id)
      }
      const onThread = (thread: ThreadChannel, newlyCreated: boolean) => {
        if (newlyCreated) coverage.empty(thread.id)
      }
      const onSessionEnded = () => coverage.lost()
      client.on(Events.GuildCreate, onGuild)
      client.on(Events.ChannelCreate, onChannel)
      client.on(Events.ThreadCreate, onThread)
      client.on(Events.ShardDisconnect, onSessionEnded)
      client.on(Events.ShardReady, onSessionEnded)
      // Guilds of READY arrive before discord.js emits ClientReady (it does not emit GuildCreate for them).
      const onReady = () => {
        for (const guild of client.guilds.cache.values()) onGuild(guild)
      }
      client.once(Events.ClientReady, onReady)
      return () => {
        client.off(Events.GuildCreate, onGuild)
        client.off(Events.ChannelCreate, onChannel)
        client.off(Events.ThreadCreate, onThread)
        client.off(Events.ShardDisconnect, onSessionEnded)
        client.off(Events.ShardReady, onSessionEnded)
        client.off(Events.ClientReady, onReady)
      }
    }),
    (remove) => Effect.sync(remove)
  ).pipe(Effect.asVoid)
