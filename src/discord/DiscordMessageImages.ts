import { Duration, Effect, Layer, Option } from "effect"
import { MessageImages } from "../media/MessageImages"
import { DiscordClient } from "./DiscordClient"
import { historyEntry } from "./history"

/** A message lookup that takes longer is treated as unreadable. */
const LOOKUP_TIMEOUT = Duration.seconds(5)

/**
 * analyze_image's message lookups on Discord: the channel's message (from the cache, else
 * fetched) with its images read the way the history reads them, and the message it replies to.
 */
export const DiscordMessageImages = Layer.effect(
  MessageImages,
  Effect.map(DiscordClient, (client) => ({
    lookup: (channelId: string, messageId: string) =>
      Effect.tryPromise(async () => {
        const channel = await client.channels.fetch(channelId)
        if (channel === null || !channel.isTextBased()) return Option.none()
        const message = await channel.messages.fetch(messageId)
        // Only the images are read: who "self" is does not matter for them.
        const entry = historyEntry(message, { botId: client.user.id, isOwnWebhook: () => false })
        return Option.some({ images: entry.images, replyTo: message.reference?.messageId ?? undefined })
      }).pipe(
        Effect.timeout(LOOKUP_TIMEOUT),
        Effect.catchAll((error) => Effect.as(Effect.logDebug(`message ${messageId} could not be looked up: ${String(error)}`), Option.none()))
      )
  }))
)
