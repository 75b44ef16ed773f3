import { Effect, Option, Ref } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"
import type { GuildToolSet } from "./GuildToolSource"
import type { MediaOutlet } from "./MediaOutlet"

/**
 * Per-turn switches tools and the loop flip while a turn runs. Each one prevents a repeat within
 * the same turn (a once-per-turn tool, a context restart).
 */
export interface TurnFlags {
  /** Tools declared `oncePerTurn` that already succeeded this turn (canonical names). */
  readonly spentOncePerTurnTools: ReadonlyArray<string>
  readonly disableYouTubeProcessing: boolean
  readonly disableProfilePictureProcessing: boolean
  readonly disableGifProcessing: boolean
  readonly disableMessageMetadataContext: boolean
  readonly suppressTextOutput: boolean
}

export const initialTurnFlags: TurnFlags = {
  spentOncePerTurnTools: [],
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
  /**
   * The guild's tools as the registry first saw them this turn: declaring the tools, dispatching
   * a call and the follow-up check all use the same set, asked of the guild source once a turn.
   */
  readonly guildTools?: Ref.Ref<Option.Option<{ readonly guildId: string; readonly set: GuildToolSet }>>
  /** Where files made by tools go on this turn's front (absent: the front takes none). */
  readonly mediaOutlet?: MediaOutlet
}

export const makeTurnState = (
  contextItems: ReadonlyArray<ChatMessage> = [],
  where: { readonly mediaOutlet?: MediaOutlet | undefined } = {}
): Effect.Effect<TurnState> =>
  Effect.map(
    Effect.all({
      flags: Ref.make(initialTurnFlags),
      contextItems: Ref.make(contextItems),
      guildTools: Ref.make(Option.none<{ readonly guildId: string; readonly set: GuildToolSet }>())
    }),
    (state): TurnState => ({
      ...state,
      ...(where.mediaOutlet === undefined ? {} : { mediaOutlet: where.mediaOutlet })
    })
  )

/** The switches of TurnFlags (every flag but the list of spent tools). */
export type TurnSwitch = { readonly [K in keyof TurnFlags]: TurnFlags[K] extends boolean ? K : never }[keyof TurnFlags]

export const setFlag = (state: TurnState, flag: TurnSwitch, value = true): Effect.Effect<void> =>
  Ref.update(state.flags, (flags) => ({ ...flags, [flag]: value }))

/** Records that a once-per-turn tool succeeded: it is hidden and refused for the rest of the turn. */
export const spendOncePerTurnTool = (state: TurnState, toolName: string): Effect.Effect<void> =>
  Ref.update(state.flags, (flags) =>
    flags.spentOncePerTurnTools.includes(toolName)
      ? flags
      : { ...flags, spentOncePerTurnTools: [...flags.spentOncePerTurnTools, toolName] })
