import type { Redacted } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"
import type { ToolDeclaration } from "../domain/ToolDeclaration"
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"

/**
 * Everything one provider pass needs. Providers replay `functionHistory` after `messages`
 * (assistant tool call with its pre-tool text merged in, then the tool response), then
 * `assistantPrefill` as the start of the answer the model must continue without repeating.
 */
export interface GenerationRequest {
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly system: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools: ReadonlyArray<ToolDeclaration>
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  /** Text already delivered for this reply (fallback continuation): the model continues after it. */
  readonly assistantPrefill?: string
  readonly temperature?: number
  readonly maxOutputTokens?: number
}
