import { cleanContent, type Message } from "discord.js"
import type { ChatMessage, ImageRef } from "../domain/ChatMessage"
import { STOPPED_MARKER } from "./DiscordReplySink"
import { clip } from "./discordLimits"
import { messageImages } from "./messageImages"

/** How many earlier channel messages a turn sees. */
export const HISTORY_LIMIT = 20
/** Characters of a replied-to message quoted in the reply annotation. */
const EXCERPT_LENGTH = 120

/** The message a history entry replies to, as far as the cache knows it. */
interface ReplyReference {
  readonly messageId: string
  readonly authorId: string
  readonly authorName: string
  readonly excerpt: string
}

/** One channel message, reduced to what the model's context needs (plus the author id for blocks). */
export interface HistoryEntry {
  readonly messageId: string
  readonly authorId: string
  readonly authorName: string
  /** Written by this bot or one of its persona webhooks. */
  readonly fromSelf: boolean
  readonly text: string
  /** ISO 8601. */
  readonly createdAt: string
  readonly images: ReadonlyArray<ImageRef>
  readonly replyTo: ReplyReference | undefined
}

/** Who "self" is when reading history. */
export interface SelfIdentity {
  readonly botId: string
  /** A webhook the bot posts personas through. */
  readonly isOwnWebhook: (webhookId: string) => boolean
}

const singleLine = (text: string) => text.replace(/\s+/g, " ").trim()

const excerptOf = (text: string) => clip(singleLine(text), EXCERPT_LENGTH)

export const isFromSelf = (message: Message, self: SelfIdentity): boolean =>
  message.author.id === self.botId || (message.webhookId !== null && self.isOwnWebhook(message.webhookId))

const authorName = (message: Message): string => message.member?.displayName ?? message.author.displayName

/**
 * The text of a message for the model: a leading mention of the bot is dropped (it is how the
 * user addressed it), other mentions become `@name`; the bot's own stopped marker is removed.
 */
const messageText = (message: Message, self: SelfIdentity): string => {
  if (isFromSelf(message, self)) {
    return message.content.endsWith(STOPPED_MARKER) ? message.content.slice(0, -STOPPED_MARKER.length) : message.content
  }
  const withoutAddress = message.content.replace(new RegExp(`^\\s*<@!?${self.botId}>\\s*`), "")
  return cleanContent(withoutAddress, message.channel)
}

/** A discord.js message as a history entry; the replied-to message comes from the client's cache. */
export const historyEntry = (message: Message, self: SelfIdentity): HistoryEntry => {
  const referenceId = message.reference?.messageId
  const referenced = referenceId === undefined ? undefined : message.channel.messages.cache.get(referenceId)
  return {
    messageId: message.id,
    authorId: message.author.id,
    authorName: authorName(message),
    fromSelf: isFromSelf(message, self),
    text: messageText(message, self),
    createdAt: message.createdAt.toISOString(),
    images: messageImages({ attachments: message.attachments.values(), embeds: message.embeds }),
    replyTo: referenced === undefined
      ? undefined
      : { messageId: referenced.id, authorId: referenced.author.id, authorName: authorName(referenced), excerpt: excerptOf(messageText(referenced, self)) }
  }
}

/**
 * A history entry as conversation context: a user's reply quotes what it answers inline (the
 * bot's own replies are not annotated, so the model never learns to write the annotation).
 */
export const toChatMessage = (entry: HistoryEntry): ChatMessage => {
  const annotation = entry.replyTo === undefined || entry.fromSelf ? "" : `[replying to ${entry.replyTo.authorName}: "${entry.replyTo.excerpt}"]\n`
  return {
    role: entry.fromSelf ? "assistant" : "user",
    content: `${annotation}${entry.text}`,
    name: entry.authorName,
    messageId: entry.messageId,
    createdAt: entry.createdAt,
    ...(entry.images.length === 0 ? {} : { images: entry.images })
  }
}

/** Entries with nothing to say (notice embeds, empty messages) are left out. */
export const hasContent = (entry: HistoryEntry): boolean => entry.text.trim().length > 0 || entry.images.length > 0
