import { Effect, Option, Ref } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"
import type { GuildToolSet } from "./GuildToolSource"

/** Per-turn switches tools and the loop flip while a turn runs. */
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

/** Live, shared state of one turn (the media outlet is left out: no ported tool posts files). */
export interface TurnState {
  readonly flags: Ref.Ref<TurnFlags>
  readonly contextItems: Ref.Ref<ReadonlyArray<ChatMessage>>
  readonly guildTools?: Ref.Ref<Option.Option<{ readonly guildId: string; readonly set: GuildToolSet }>>
  readonly parentChannelId?: string
}

export const makeTurnState = (
  contextItems: ReadonlyArray<ChatMessage> = [],
  where: { readonly parentChannelId?: string | undefined } = {}
): Effect.Effect<TurnState> =>
  Effect.map(
    Effect.all({
      flags: Ref.make(initialTurnFlags),
      contextItems: Ref.make(contextItems),
      guildTools: Ref.make(Option.none<{ readonly guildId: string; readonly set: GuildToolSet }>())
    }),
    (state): TurnState => ({
      ...state,
      ...(where.parentChannelId === undefined ? {} : { parentChannelId: where.parentChannelId })
    })
  )

export const setFlag = (state: TurnState, flag: keyof TurnFlags, value = true): Effect.Effect<void> =>
  Ref.update(state.flags, (flags) => ({ ...flags, [flag]: value }))
