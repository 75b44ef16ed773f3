import type { APIEmbed, SendableChannels } from "discord.js"
import { Effect, Ref } from "effect"
import { type RequestTicket, underTicket } from "./budgetedRest"
import { NO_MENTIONS } from "./DiscordClient"
import { classifyWriteError, type ReplyWriteError } from "./discordErrors"

/** What one Discord message carries: reply text, or a notice embed. */
export type OutgoingMessage =
  | { readonly _tag: "Text"; readonly content: string }
  | { readonly _tag: "Embed"; readonly embed: APIEmbed }

/** Options of one post. */
export interface SendOptions {
  /**
   * The same for every try of one message: where the destination supports it (bot messages,
   * `enforce_nonce`), Discord returns the message already created instead of a second copy
   * when a retried post had gone through after all.
   */
  readonly nonce?: string
  /** The request-budget slot (and lane) the post was granted; without one it waits for its own. */
  readonly ticket?: RequestTicket
}

/** Options of one edit. */
export interface EditOptions {
  readonly ticket?: RequestTicket
}

/**
 * Where a turn's messages go: as the bot (replying to the trigger) or as a persona through a
 * webhook. Every call passes `allowedMentions` that ping nobody. Failures are classified
 * (ReplyWriteError `kind`); the reply sink decides what to do about them.
 */
export interface ReplyTarget {
  /** The channel written to (threads included). */
  readonly channelId: string
  /** The ids whose rate-limit buckets this target's requests use (channel, webhook). */
  readonly rateLimitKeys: Effect.Effect<ReadonlyArray<string>>
  /** Posts a message and returns its id. */
  readonly send: (message: OutgoingMessage, options?: SendOptions) => Effect.Effect<string, ReplyWriteError>
  /** Edits a message this target posted. */
  readonly edit: (messageId: string, content: string, options?: EditOptions) => Effect.Effect<void, ReplyWriteError>
}

export const messagePayload = (message: OutgoingMessage) =>
  message._tag === "Text" ? { content: message.content } : { embeds: [message.embed] }

/**
 * Plain bot messages in `channel`. The first message of the turn replies to `replyTo` (without
 * pinging its author, and without failing when the user deleted it).
 */
export const channelReplyTarget = (channel: SendableChannels, replyTo: string | undefined): Effect.Effect<ReplyTarget> =>
  Effect.map(Ref.make(replyTo), (pendingReply): ReplyTarget => ({
    channelId: channel.id,
    rateLimitKeys: Effect.succeed([channel.id]),
    send: (message, options = {}) =>
      Effect.gen(function*() {
        const reference = yield* Ref.get(pendingReply)
        const sent = yield* Effect.tryPromise({
          try: (): Promise<{ readonly id: string }> =>
            underTicket(options.ticket, (): Promise<{ readonly id: string }> =>
              channel.send({
                ...messagePayload(message),
                allowedMentions: NO_MENTIONS,
                ...(options.nonce === undefined ? {} : { nonce: options.nonce, enforceNonce: true }),
                ...(reference === undefined ? {} : { reply: { messageReference: reference, failIfNotExists: false } })
              })),
          catch: (error) => classifyWriteError(error, "send")
        })
        // Only the first message that went out replies (a failed try keeps the reference).
        yield* Ref.set(pendingReply, undefined)
        return sent.id
      }),
    edit: (messageId, content, options = {}) =>
      Effect.tryPromise({
        try: (): Promise<unknown> => underTicket(options.ticket, () => channel.messages.edit(messageId, { content, allowedMentions: NO_MENTIONS })),
        catch: (error) => classifyWriteError(error, "edit")
      }).pipe(Effect.asVoid)
  }))
