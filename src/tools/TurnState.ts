import { Effect, Ref } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"

/**
 * Per-turn switches tools and the loop flip while a turn runs (spec §1.7 StreamingContext).
 * Each one prevents a repeat within the same turn (one-shot STM, context restarts).
 */
export interface TurnFlags {
  readonly disableShortTermMemoryUpdate: boolean
  readonly disableYouTubeProcessing: boolean
  readonly disableProfilePictureProcessing: boolean
  readonly disableGifProcessing: boolean
  readonly disableMessageMetadataContext: boolean
  readonly suppressTextOutput: boolean
}

export const initialTurnFlags: TurnFlags = {
  disableShortTermMemoryUpdate: false,
  disableYouTubeProcessing: false,
  disableProfilePictureProcessing: false,
  disableGifProcessing: false,
  disableMessageMetadataContext: false,
  suppressTextOutput: false
}

/** Live, shared state of one turn: flags and the conversation context items (tools may read both). */
export interface TurnState {
  readonly flags: Ref.Ref<TurnFlags>
  readonly contextItems: Ref.Ref<ReadonlyArray<ChatMessage>>
}

export const makeTurnState = (contextItems: ReadonlyArray<ChatMessage> = []): Effect.Effect<TurnState> =>
  Effect.all({
    flags: Ref.make(initialTurnFlags),
    contextItems: Ref.make(contextItems)
  })

export const setFlag = (state: TurnState, flag: keyof TurnFlags, value = true): Effect.Effect<void> =>
  Ref.update(state.flags, (flags) => ({ ...flags, [flag]: value }))
