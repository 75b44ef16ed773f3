import { Context } from "effect"
import type { DeliberateToolMode } from "../domain/DeliberateToolMode"
import type { TurnOrigin } from "../domain/TurnOrigin"
import type { TurnState } from "../tools/TurnState"

/**
 * Front-agnostic facts about the turn being generated: who asked, where, as which persona (its
 * TurnOrigin), and the live turn state. Provided once per turn by the front.
 */
export interface TurnContextShape extends TurnOrigin {
  /** Whether user-facing error notices are shown for this turn at all. */
  readonly shouldSurfaceUserErrors: boolean
  /** The turn was queued behind another one (its reply should reference the trigger). */
  readonly isFromQueue: boolean
  /**
   * The answer to a /kill: it acknowledges, it never acts. No tools are declared, a tool call it
   * emits anyway is refused without dispatch, and it gets one pass.
   */
  readonly isStopResponse: boolean
  readonly deliberate: DeliberateToolMode
  readonly state: TurnState
}

export class CurrentTurn extends Context.Service<CurrentTurn, TurnContextShape>()("loopcord/loop/CurrentTurn") {}
