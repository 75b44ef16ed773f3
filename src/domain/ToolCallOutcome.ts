import { Data } from "effect"
import type { TurnStatus } from "./PassResult"
import type { Sticker } from "./Sticker"
import type { ToolHistoryEntry } from "./ToolHistoryEntry"

/**
 * What executeToolCall tells the loop (docs/architecture.md, One tool call):
 * - `Restart`: context was enriched; no history entry, next pass starts.
 * - `Abort`: a fatal condition (malformed call, stop); the loop ends with `status`.
 * - `History`: append `historyEntry` and continue (or end on `endTurn`).
 */
export type ToolCallOutcome = Data.TaggedEnum<{
  Restart: { readonly functionName: string; readonly durationMs: number }
  Abort: { readonly status: TurnStatus }
  History: {
    readonly functionName: string
    readonly success: boolean
    readonly endTurn: boolean
    /** The tool declared itself a silent write: after visible text of the pass, its success ends the turn. */
    readonly endsTurnAfterText: boolean
    readonly responseDelivered: boolean
    /**
     * Only for a tool declaring the `StickerSelected` turn effect: the sticker chosen (latest call
     * wins) or `null` when that call carried none (clears an earlier choice). Undefined otherwise.
     */
    readonly stickerSelection: Sticker | null | undefined
    readonly historyEntry: ToolHistoryEntry
    /** Wall time of the dispatch on the Clock; 0 when the call was refused before dispatch. */
    readonly durationMs: number
    /**
     * What the call checkpoint decided (a loop hook, e.g. Response Drafting's reviewer):
     * `rejected` — refused, nothing ran (it neither counts toward nor resets the
     * consecutive-error cap); `reused` — an identical request already succeeded this turn and its
     * outcome was replayed, nothing ran.
     */
    readonly checkpointStatus?: "rejected" | "reused"
  }
}>

export const ToolCallOutcome = Data.taggedEnum<ToolCallOutcome>()
