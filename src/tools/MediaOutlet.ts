import { Data, type Effect } from "effect"

/** A file a tool made for the user: a generated image, or a voice message. */
export interface OutgoingMedia {
  readonly kind: "image" | "voice"
  readonly bytes: Uint8Array
  readonly filename: string
  readonly mimeType: string
  /** The opaque id the model knows it by. */
  readonly mediaId: string
  /** Voice messages: what Discord shows (seconds, base64 amplitude bytes). */
  readonly voice?: { readonly durationSecs: number; readonly waveform: string }
}

/** Where the file went: a message on the front, or a path on disk (the terminal). */
export interface MediaDelivery {
  readonly messageId?: string
  readonly savedTo?: string
}

export class MediaDeliveryError extends Data.TaggedError("MediaDeliveryError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

/**
 * How a turn's front delivers files (an attachment on Discord, a file under ./data/media in the
 * terminal). The front opens one per turn with its sink; tools reach it through the turn state.
 */
export interface MediaOutlet {
  readonly deliver: (media: OutgoingMedia) => Effect.Effect<MediaDelivery, MediaDeliveryError>
}
