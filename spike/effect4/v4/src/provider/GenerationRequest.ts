import type { Redacted } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"
import type { ToolDeclaration } from "../domain/ToolDeclaration"
import type { ToolHistoryEntry } from "../domain/ToolHistoryEntry"

/** Everything one provider pass needs. */
export interface GenerationRequest {
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly system: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools: ReadonlyArray<ToolDeclaration>
  readonly functionHistory: ReadonlyArray<ToolHistoryEntry>
  readonly assistantPrefill?: string
  readonly temperature?: number
  readonly maxOutputTokens?: number
}
