/** An image attached to a message, for vision-capable models. */
export interface ImageRef {
  readonly url: string
  readonly mimeType?: string
  /** Size in bytes, when the front knows it before anyone downloads the image. */
  readonly sizeBytes?: number
}

/**
 * One item of conversation context (spec "contextItems"): a message from the channel history,
 * a system injection (blocked-user notice, restart payload, verbatim nudge), or a prior reply.
 */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
  /** Display name of the author, for multi-user channels. */
  readonly name?: string
  readonly images?: ReadonlyArray<ImageRef>
  /** Source message id on the front (Discord message id), for reply references and metadata. */
  readonly messageId?: string
  /** When the source message was sent (ISO 8601), for the message-metadata context restart. */
  readonly createdAt?: string
}

export const ChatMessage = (message: ChatMessage): ChatMessage => ({ ...message })
