import type { APIEmbed, SendableChannels } from "discord.js"
import { Effect, Ref } from "effect"
import type { DeliveryError } from "../loop/ResponseSink"
import { NO_MENTIONS } from "./DiscordClient"
import { discordErrorCode, DiscordErrorCode, toDeliveryError } from "./discordErrors"

/** What one Discord message carries: reply text, or a notice embed. */
export type OutgoingMessage =
  | { readonly _tag: "Text"; readonly content: string }
  | { readonly _tag: "Embed"; readonly embed: APIEmbed }

/**
 * Where a turn's messages go: as the bot (replying to the trigger) or as a persona through a
 * webhook. Every call passes `allowedMentions` that ping nobody.
 */
export interface ReplyTarget {
  /** The channel written to (threads included). */
  readonly channelId: string
  /** The ids whose rate-limit buckets this target's requests use (channel, webhook). */
  readonly rateLimitKeys: Effect.Effect<ReadonlyArray<string>>
  /** Posts a message and returns its id. */
  readonly send: (message: OutgoingMessage) => Effect.Effect<string, DeliveryError>
  /** Edits a message this target posted; returns the id now holding the content (a re-post gets a new one). */
  readonly edit: (messageId: string, content: string) => Effect.Effect<string, DeliveryError>
}

const payload = (message: OutgoingMessage) =>
  message._tag === "Text" ? { content: message.content } : { embeds: [message.embed] }

/**
 * Plain bot messages in `channel`. The first message of the turn replies to `replyTo` (without
 * pinging its author, and without failing when the user deleted it).
 */
export const channelReplyTarget = (channel: SendableChannels, replyTo: string | undefined): Effect.Effect<ReplyTarget> =>
  Effect.map(Ref.make(replyTo), (pendingReply): ReplyTarget => ({
    channelId: channel.id,
    rateLimitKeys: Effect.succeed([channel.id]),
    send: (message) =>
      Effect.gen(function*() {
        const reference = yield* Ref.getAndSet(pendingReply, undefined)
        const sent = yield* Effect.tryPromise({
          try: (): Promise<{ readonly id: string }> =>
            channel.send({
              ...payload(message),
              allowedMentions: NO_MENTIONS,
              ...(reference === undefined ? {} : { reply: { messageReference: reference, failIfNotExists: false } })
            }),
          catch: toDeliveryError
        })
        return sent.id
      }),
    edit: (messageId, content) =>
      Effect.tryPromise({
        try: (): Promise<unknown> => channel.messages.edit(messageId, { content, allowedMentions: NO_MENTIONS }),
        catch: (error) => error
      }).pipe(
        Effect.as(messageId),
        // Someone deleted the message mid-stream: its text goes out again as a new message.
        Effect.catchAll((error) =>
          discordErrorCode(error) === DiscordErrorCode.UnknownMessage
            ? Effect.tryPromise({
              try: (): Promise<{ readonly id: string }> => channel.send({ content, allowedMentions: NO_MENTIONS }),
              catch: toDeliveryError
            }).pipe(Effect.map((sent) => sent.id))
            : Effect.fail(toDeliveryError(error))
        )
      )
  }))
