import { Context, Effect, Layer, Option } from "effect"
import type { ImageRef } from "../domain/ChatMessage"

/** The images of one message on the front, and the message it replies to (when it does). */
interface MessageImagesFound {
  readonly images: ReadonlyArray<ImageRef>
  readonly replyTo: string | undefined
}

/**
 * Looks a message up on the front, for analyze_image's "the message it replies to" (Discord:
 * the channel's message and its reference). Never fails: an unknown or unreadable message is None.
 */
export class MessageImages extends Context.Service<MessageImages, {
  readonly lookup: (channelId: string, messageId: string) => Effect.Effect<Option.Option<MessageImagesFound>>
}>()("loopcord/media/MessageImages") {
  /** Fronts without message lookups (the terminal): the turn's context is all there is. */
  static readonly none = Layer.succeed(MessageImages, { lookup: () => Effect.succeedNone })
}
