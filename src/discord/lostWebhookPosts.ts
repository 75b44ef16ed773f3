import type { Message, SendableChannels, Webhook, WebhookType } from "discord.js"
import { Effect, Option } from "effect"
import { NO_MENTIONS } from "./DiscordClient"
import type { OutgoingMessage } from "./ReplyTarget"

/** How far back the channel is read for lost copies; a reply's post is among the newest. */
const LOOK_BACK_MESSAGES = 20
/** Tolerated difference between this host's clock and Discord's snowflake times. */
const CLOCK_SKEW_MS = 60_000

/** One webhook post of a reply whose answer never arrived: the post may have gone through. */
export interface UnansweredPost {
  readonly webhook: Webhook<WebhookType.Incoming>
  /** Local time just before the first try. */
  readonly since: number
}

/** Whether `candidate` is an earlier try of `message` (the reply's text only grows meanwhile). */
const isEarlierTry = (candidate: Message, message: OutgoingMessage): boolean =>
  message._tag === "Text"
    ? candidate.content.length > 0 && message.content.startsWith(candidate.content)
    : candidate.embeds.some((embed) => embed.title === (message.embed.title ?? null) && embed.description === (message.embed.description ?? null))

/**
 * Webhook posts take no nonce, so a post retried after a lost answer (a 5xx after Discord
 * created the message, each of discord.js's own tries included) would show twice. Before the
 * retry, the channel's newest messages are read: copies from the same webhook, after the first
 * try, that the reply does not know yet and whose text the new one extends. The oldest is kept
 * (brought up to the latest text) and returned; the others are deleted. None when there is no
 * copy, or when the channel cannot be read (the retry then posts, as before).
 */
export const recoverLostWebhookPost = (
  channel: SendableChannels,
  threadId: string | undefined,
  post: UnansweredPost,
  message: OutgoingMessage,
  known: ReadonlySet<string>
): Effect.Effect<Option.Option<string>> =>
  Effect.gen(function*() {
    const recent = yield* Effect.tryPromise(() => channel.messages.fetch({ limit: LOOK_BACK_MESSAGES, cache: false }))
    const copies = [...recent.values()]
      .filter((candidate) =>
        candidate.webhookId === post.webhook.id && !known.has(candidate.id) && candidate.createdTimestamp >= post.since - CLOCK_SKEW_MS &&
        isEarlierTry(candidate, message)
      )
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
    const [kept, ...extra] = copies
    if (kept === undefined) return Option.none()
    // A copy that cannot be deleted stays, but the reply still has one message it goes on in.
    const deleted = yield* Effect.forEach(extra, (copy) => Effect.option(Effect.tryPromise(() => post.webhook.deleteMessage(copy.id, threadId))))
    const leftBehind = deleted.filter(Option.isNone).length
    if (message._tag === "Text" && kept.content !== message.content) {
      yield* Effect.tryPromise(() => post.webhook.editMessage(kept.id, { content: message.content, ...(threadId === undefined ? {} : { threadId }), allowedMentions: NO_MENTIONS }))
    }
    const others = extra.length === 0 ? "" : `; ${extra.length - leftBehind} more copies deleted${leftBehind === 0 ? "" : `, ${leftBehind} could not be`}`
    yield* Effect.logInfo(`A persona post whose answer was lost had gone through; kept it${others}`).pipe(
      Effect.annotateLogs({ channelId: channel.id, messageId: kept.id })
    )
    return Option.some(kept.id)
  }).pipe(
    Effect.catch((error) =>
      Effect.as(
        Effect.logWarning(`Could not look for a lost persona post before posting again: ${error.cause instanceof Error ? error.cause.message : String(error.cause)}`).pipe(
          Effect.annotateLogs({ channelId: channel.id })
        ),
        Option.none()
      )
    )
  )
