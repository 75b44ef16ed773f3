import { Context } from "effect"
import type { TurnState } from "../tools/TurnState"

/** Deliberate tool mode for this turn: which tools trigger phrases exposed. */
export interface DeliberateToolMode {
  readonly active: boolean
  /** Names the model may call; empty means no allowlist. */
  readonly allowedNames: ReadonlyArray<string>
  /** Which trigger phrase exposed each tool, for the hidden trigger notice. */
  readonly triggerMatchByToolName: ReadonlyMap<string, { readonly trigger: string; readonly source: string }>
  /** Turns a successful tool stays exposed afterwards (affordance retention). */
  readonly contextTurns: number
  /**
   * Deliberate mode is on but the message asked for no tool: declare no tools this turn (fails
   * closed, like TomoriBot's `disableAllTools`). Absent means false.
   */
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

/**
 * Front-agnostic facts about the turn being generated: who asked,
 * where, as which persona, and the live turn state. Provided once per turn by the front.
 */
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
  /** Whether user-facing error notices are shown for this turn at all. */
  readonly shouldSurfaceUserErrors: boolean
  /** The turn was queued behind another one (its reply should reference the trigger). */
  readonly isFromQueue: boolean
  /**
   * The answer to a /kill: it acknowledges, it never acts. No tools are
   * declared, a tool call it emits anyway is refused without dispatch, and it gets one pass.
   */
  readonly isStopResponse: boolean
  readonly deliberate: DeliberateToolMode
  readonly state: TurnState
}

export class CurrentTurn extends Context.Tag("loopcord/loop/CurrentTurn")<CurrentTurn, TurnContextShape>() {}
