import { Duration, Effect, Layer, Option } from "effect"
import { MessageImages } from "../media/MessageImages"
import { DiscordClient } from "./DiscordClient"
import { messageImages } from "./messageImages"

/** A message lookup that takes longer is treated as unreadable. */
const LOOKUP_TIMEOUT = Duration.seconds(5)

/**
 * analyze_image's message lookups on Discord: the channel's message (from the cache, else
 * fetched) with its images read the way the history reads them (Discord's proxy URLs), and the
 * message it replies to.
 */
export const DiscordMessageImages = Layer.effect(
  MessageImages,
  Effect.map(DiscordClient, (client) => ({
    lookup: (channelId: string, messageId: string) =>
      Effect.tryPromise(async () => {
        const channel = await client.channels.fetch(channelId)
        if (channel === null || !channel.isTextBased()) return Option.none()
        const message = await channel.messages.fetch(messageId)
        const images = messageImages({ attachments: message.attachments.values(), embeds: message.embeds })
        return Option.some({ images, replyTo: message.reference?.messageId ?? undefined })
      }).pipe(
        Effect.timeout(LOOKUP_TIMEOUT),
        Effect.catch((error) => Effect.as(Effect.logDebug(`message ${messageId} could not be looked up: ${String(error)}`), Option.none()))
      )
  }))
)
