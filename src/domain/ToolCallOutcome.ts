import { Data } from "effect"
import type { TurnStatus } from "./PassResult"
import type { Sticker } from "./Sticker"
import type { ToolHistoryEntry } from "./ToolHistoryEntry"

/**
 * What executeToolCall tells the loop (seed 02 output, design §2 decision 3):
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
    readonly responseDelivered: boolean
    /**
     * Only for `select_sticker_for_response`: the sticker chosen (latest call wins) or `null`
     * when that tool missed (clears an earlier choice). Undefined for every other tool.
     */
    readonly stickerSelection: Sticker | null | undefined
    readonly historyEntry: ToolHistoryEntry
    /** Wall time of the dispatch on the Clock; 0 when the call was refused before dispatch. */
    readonly durationMs: number
    /**
     * Response Drafting (spec §3 step 5b): `rejected` — the reviewer refused it, nothing ran (it
     * neither counts toward nor resets the consecutive-error cap); `reused` — an identical
     * request already succeeded this turn and its outcome was replayed, nothing ran.
     */
    readonly reviewStatus?: "rejected" | "reused"
  }
}>

export const ToolCallOutcome = Data.taggedEnum<ToolCallOutcome>()
