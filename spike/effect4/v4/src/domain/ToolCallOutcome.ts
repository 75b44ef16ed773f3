import { Data } from "effect"
import type { TurnStatus } from "./PassResult"
import type { Sticker } from "./Sticker"
import type { ToolHistoryEntry } from "./ToolHistoryEntry"

/** What executeToolCall tells the loop: restart the context, abort the turn, or a history entry. */
export type ToolCallOutcome = Data.TaggedEnum<{
  Restart: { readonly functionName: string; readonly durationMs: number }
  Abort: { readonly status: TurnStatus }
  History: {
    readonly functionName: string
    readonly success: boolean
    readonly endTurn: boolean
    readonly responseDelivered: boolean
    readonly stickerSelection: Sticker | null | undefined
    readonly historyEntry: ToolHistoryEntry
    readonly durationMs: number
    readonly reviewStatus?: "rejected" | "reused"
  }
}>

export const ToolCallOutcome = Data.taggedEnum<ToolCallOutcome>()
