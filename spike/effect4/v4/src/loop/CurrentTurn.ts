import { Context } from "effect"
import type { TurnState } from "../tools/TurnState"

/** Deliberate tool mode for this turn: which tools trigger phrases exposed. */
export interface DeliberateToolMode {
  readonly active: boolean
  readonly allowedNames: ReadonlyArray<string>
  readonly triggerMatchByToolName: ReadonlyMap<string, { readonly trigger: string; readonly source: string }>
  readonly contextTurns: number
  readonly disableAllTools?: boolean
}

export const deliberateModeOff: DeliberateToolMode = {
  active: false,
  allowedNames: [],
  triggerMatchByToolName: new Map(),
  contextTurns: 0
}

export interface Persona {
  readonly id: string | undefined
  readonly name: string
  readonly avatarUrl: string | undefined
  readonly systemPrompt: string
}

/** Front-agnostic facts about the turn being generated, provided once per turn by the front. */
export interface TurnContextShape {
  readonly channelId: string
  readonly guildId: string | undefined
  readonly userId: string
  readonly messageId: string | undefined
  readonly isDM: boolean
  readonly locale: string
  readonly persona: Persona
  readonly isUserImpersonation: boolean
  readonly impersonatedUserId: string | undefined
  readonly shouldSurfaceUserErrors: boolean
  readonly isFromQueue: boolean
  readonly isStopResponse: boolean
  readonly deliberate: DeliberateToolMode
  readonly state: TurnState
}

export class CurrentTurn extends Context.Service<CurrentTurn, TurnContextShape>()("loopcord/loop/CurrentTurn") {}
