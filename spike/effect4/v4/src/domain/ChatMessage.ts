/** An image attached to a message, for vision-capable models. */
export interface ImageRef {
  readonly url: string
  readonly mimeType?: string
  readonly sizeBytes?: number
}

/** One item of conversation context: a channel message, a system injection, or a prior reply. */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
  readonly name?: string
  readonly images?: ReadonlyArray<ImageRef>
  readonly messageId?: string
  readonly createdAt?: string
}

// Effect 4 has no Data.case: plain objects already compare structurally (Equal.equals).
export const ChatMessage = (message: ChatMessage): ChatMessage => ({ ...message })
