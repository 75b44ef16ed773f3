import type { Client, Message, SendableChannels } from "discord.js"
import { Clock, type Duration, Effect } from "effect"
import type { TurnInput, TurnSink } from "../chat/TurnInput"
import type { ChatMessage } from "../domain/ChatMessage"
import type { TurnResult } from "../domain/TurnResult"
import type { DeliberateToolMode } from "../domain/DeliberateToolMode"
import type { Persona } from "../domain/Persona"
import type { PersonaBlockStore } from "../store/PersonaBlockStore"
import { applyBlockedUserNotices, blockedMessageIds } from "../tools/builtin/blocking/blockedUserContext"
import { NO_MENTIONS } from "./DiscordClient"
import { discordMediaOutlet } from "./DiscordMediaOutlet"
import { type DiscordReplySink, makeDiscordReplySink } from "./DiscordReplySink"
import { recentMessages } from "./channelHistory"
import { HISTORY_LIMIT, hasContent, type HistoryEntry, historyEntry, isFromSelf, type SelfIdentity, toChatMessage } from "./history"
import type { HistoryCoverageState } from "./HistoryCoverage"
import type { PersonaWebhooks } from "./PersonaWebhooks"
import type { RateLimitGauge } from "./RateLimitGauge"
import { replyChain } from "./replyChain"
import type { RequestBudgetService } from "./RequestBudget"
import { channelReplyTarget } from "./ReplyTarget"
import { budgetedTyping, keepTyping, TYPING_REFRESH } from "./TypingIndicator"

/** Knobs of the Discord front (tests shorten them). */
export interface DiscordFrontOptions {
  readonly minEditInterval?: Duration.Input
  readonly typingRefresh?: Duration.Input
  readonly historyLimit?: number
  /** How long the notice to a user over the server's rate stays (default 15 s). */
  readonly rateNoticeLifetime?: Duration.Input
  /** All the fetches of one reply chain together (default 3 s). */
  readonly replyChainBudget?: Duration.Input
}

/** What building a turn needs from the running bot. */
export interface DiscordTurnDeps {
  readonly client: Client<true>
  readonly webhooks: PersonaWebhooks["Service"]
  readonly gauge: RateLimitGauge["Service"]
  /** Every REST request takes a slot of it; replies go first. */
  readonly budget: RequestBudgetService
  /** Which channels' history the client's cache holds whole (read from there instead of Discord). */
  readonly coverage: HistoryCoverageState
  readonly persona: Persona
  /** Replies go through a persona webhook (BOT_PERSONA_NAME is set). */
  readonly useWebhooks: boolean
  /** DISCORD_MAX_MESSAGES_PER_TURN: a reply needing more messages is cut with a marker. */
  readonly maxMessagesPerTurn: number
  readonly options: DiscordFrontOptions
  /** Turns the history into the model's context (the blocked-user notice is applied here). */
  readonly contextFor: (trigger: Message, entries: ReadonlyArray<HistoryEntry>) => Effect.Effect<ReadonlyArray<ChatMessage>>
  /** `DISCORD_REPLY_CHAIN_MAX`: replied-to messages outside the history brought in (default 0: none). */
  readonly replyChainMax?: number
  /** Runs once the reply is delivered (its reasoning shown, when the server asks for it). */
  readonly afterReply?: (channel: SendableChannels, result: TurnResult) => Effect.Effect<void>
}

/**
 * The channel's recent messages around a trigger, oldest first, ending with the trigger: earlier
 * messages, plus the bot's own replies posted after it (a queued turn sees what was answered
 * while it waited); other users' later messages are theirs to trigger. Read from the client's
 * cache when it holds them all, else from Discord.
 */
const recentHistory = (
  trigger: Message,
  self: SelfIdentity,
  limit: number,
  reading: { readonly coverage: HistoryCoverageState; readonly budget: RequestBudgetService }
): Effect.Effect<ReadonlyArray<HistoryEntry>> =>
  recentMessages(trigger.channel, limit, reading.coverage, reading.budget).pipe(
    Effect.map(({ messages }) =>
      messages
        .filter((message) => message.id !== trigger.id)
        .filter((message) => BigInt(message.id) < BigInt(trigger.id) || isFromSelf(message, self))
        .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
    ),
    Effect.catch((error) =>
      Effect.as(
        Effect.logWarning(`Could not read channel history (is Read Message History granted?): ${error.message}`),
        []
      )
    ),
    Effect.map((earlier) => [...earlier, trigger].map((message) => historyEntry(message, self)).filter(hasContent))
  )

/**
 * After the turn: show everything, mark a stopped reply, send the chosen sticker. The sticker
 * goes out only with a reply that completed (not after /kill, a follow-up interrupt, an error
 * or a delivery failure: a sticker under half an answer would read as its end).
 */
export const finishReply = (reply: DiscordReplySink, channel: SendableChannels, result: TurnResult): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* reply.drain
    if (result.status === "stopped_by_user") yield* reply.markStopped
    const sticker = result.stickerSelection
    if (sticker !== undefined && result.status === "completed" && !channel.isDMBased()) {
      // Webhooks cannot send guild stickers: the sticker comes from the bot itself.
      yield* Effect.tryPromise(() => channel.send({ stickers: [sticker.id], allowedMentions: NO_MENTIONS }))
    }
  }).pipe(
    Effect.catchTag("DeliveryError", (error) => Effect.logWarning(`Discord reply not fully delivered (${error.reason}): ${error.detail}`)),
    Effect.catchCause((cause) => Effect.logWarning("finishing the Discord reply failed", cause))
  )

/** The sink of one turn: persona webhook or bot replies, streamed, with typing while it runs. */
const openDiscordSink = (deps: DiscordTurnDeps, channel: SendableChannels, replyTo: string | undefined) =>
  Effect.gen(function*() {
    const fallback = yield* channelReplyTarget(channel, replyTo)
    const target = deps.useWebhooks ? yield* deps.webhooks.target(channel, deps.persona, fallback) : fallback
    const reply = yield* makeDiscordReplySink(target, {
      awaitBucket: deps.gauge.awaitReset,
      reserve: deps.budget.reserve,
      maxMessages: deps.maxMessagesPerTurn,
      ...(deps.options.minEditInterval === undefined ? {} : { minEditInterval: deps.options.minEditInterval })
    })
    const nothingVisible = Effect.map(reply.messageIds, (ids) => ids.length === 0)
    yield* Effect.forkScoped(keepTyping(budgetedTyping(deps.budget, channel), nothingVisible, deps.options.typingRefresh ?? TYPING_REFRESH))
    const sink: TurnSink = {
      sink: reply.sink,
      finish: (result) =>
        deps.afterReply === undefined ? finishReply(reply, channel, result) : Effect.andThen(finishReply(reply, channel, result), deps.afterReply(channel, result)),
      mediaOutlet: discordMediaOutlet(channel, replyTo)
    }
    return sink
  })

/** The ChannelQueue input answering `trigger`. */
export const discordTurnInput = (deps: DiscordTurnDeps, trigger: Message, channel: SendableChannels, deliberate: DeliberateToolMode): TurnInput => ({
  channelId: trigger.channelId,
  // A thread shares its channel's short-term memory.
  ...(trigger.channel.isThread() && trigger.channel.parentId !== null ? { parentChannelId: trigger.channel.parentId } : {}),
  guildId: trigger.guildId ?? undefined,
  userId: trigger.author.id,
  messageId: trigger.id,
  isDM: !trigger.inGuild(),
  locale: trigger.guild?.preferredLocale ?? "en-US",
  persona: deps.persona,
  loadContext: Effect.gen(function*() {
    const ownIds = yield* deps.webhooks.knownOwnIds
    const self: SelfIdentity = { botId: deps.client.user.id, isOwnWebhook: (id) => ownIds.has(id) }
    const recent = yield* recentHistory(trigger, self, deps.options.historyLimit ?? HISTORY_LIMIT, deps)
    // A reply to a message older than the history brings that message and its chain in, first.
    const chain = yield* replyChain(trigger, new Set(recent.map((entry) => entry.messageId)), self, {
      max: deps.replyChainMax ?? 0,
      ...(deps.options.replyChainBudget === undefined ? {} : { budget: deps.options.replyChainBudget })
    })
    return yield* deps.contextFor(trigger, [...chain, ...recent])
  }),
  shouldSurfaceUserErrors: true,
  deliberate,
  openSink: openDiscordSink(deps, channel, trigger.id)
})

/**
 * History entries as the model's context under the persona's blocks (docs/architecture.md, Persona
 * blocks): a blocked user's messages become one system notice per run, and no other message quotes
 * them in its reply annotation. A failed block lookup leaves the context unblocked (and is logged).
 */
export const contextWithBlocks = (
  store: PersonaBlockStore["Service"],
  persona: Persona,
  guildId: string | undefined,
  entries: ReadonlyArray<HistoryEntry>
): Effect.Effect<ReadonlyArray<ChatMessage>> =>
  Effect.gen(function*() {
    const blocks = guildId === undefined
      ? []
      : yield* store.activeBlocks(guildId, persona.id).pipe(
        Effect.catch((error) => Effect.as(Effect.logWarning(`block lookup failed; context left unblocked: ${error.message}`), []))
      )
    if (blocks.length === 0) return entries.map((entry) => toChatMessage(entry))
    const now = yield* Clock.currentTimeMillis
    const authorById = new Map<string, string>()
    for (const entry of entries) {
      authorById.set(entry.messageId, entry.authorId)
      if (entry.replyTo !== undefined) authorById.set(entry.replyTo.messageId, entry.replyTo.authorId)
    }
    const options = { now, authorOf: (message: ChatMessage) => (message.messageId === undefined ? undefined : authorById.get(message.messageId)) }
    // Replied-to messages may lie outside the window: they are checked as well.
    const quoted = entries.flatMap((entry): ReadonlyArray<ChatMessage> =>
      entry.replyTo === undefined ? [] : [{ role: "user", content: entry.replyTo.excerpt, messageId: entry.replyTo.messageId }])
    const hidden = blockedMessageIds(quoted, blocks, options)
    const messages = entries.map((entry) =>
      toChatMessage(entry.replyTo !== undefined && hidden.has(entry.replyTo.messageId) ? { ...entry, replyTo: undefined } : entry))
    return applyBlockedUserNotices(messages, blocks, options)
  })
