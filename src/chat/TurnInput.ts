import type { Effect, Scope } from "effect"
import type { ChatMessage } from "../domain/ChatMessage"
import type { TurnResult } from "../domain/TurnResult"
import type { DeliberateToolMode } from "../domain/DeliberateToolMode"
import type { TurnOrigin } from "../domain/TurnOrigin"
import type { StopContext } from "../loop/TurnSignals"
import type { ResponseSink } from "../loop/ResponseSink"
import type { MediaOutlet } from "../tools/MediaOutlet"

/** Where one turn's reply goes, opened when the turn starts and closed (its scope) when it ends. */
export interface TurnSink {
  readonly sink: ResponseSink["Service"]
  /** Where files made by tools go (an attachment, a saved file); absent: nowhere. */
  readonly mediaOutlet?: MediaOutlet
  /** Runs after the turn, before the scope closes (drain pending edits, mark a stopped reply…). */
  readonly finish?: (result: TurnResult) => Effect.Effect<void>
}

/**
 * One message to answer, as a front hands it to the ChannelQueue: who, where, as which persona
 * (its TurnOrigin; impersonation may be left out: off), the conversation, and where the reply
 * goes. Front-agnostic (Discord, terminal, tests).
 */
export interface TurnInput extends Omit<TurnOrigin, "isUserImpersonation" | "impersonatedUserId"> {
  /**
   * The model chain this turn runs on (a server's or a channel's choice); absent: the operator's
   * `LLM_MODELS`. Replaces the route plan's models for this turn only.
   */
  readonly models?: ReadonlyArray<string>
  /**
   * The conversation, ending with the message to answer. Loaded when the turn starts, so a
   * queued turn sees the replies that were given while it waited.
   */
  readonly loadContext: Effect.Effect<ReadonlyArray<ChatMessage>>
  /**
   * The message answered, for fronts whose `loadContext` of a later message would not hold it
   * (the terminal keeps only answered turns). When the channel's queue is full and this message
   * folds into a later one's turn, it is added to that turn's context. Fronts whose context is
   * the channel's history (Discord) leave it out.
   */
  readonly message?: ChatMessage
  readonly shouldSurfaceUserErrors: boolean
  readonly isUserImpersonation?: boolean
  readonly impersonatedUserId?: string | undefined
  readonly deliberate?: DeliberateToolMode
  readonly openSink: Effect.Effect<TurnSink, never, Scope.Scope>
  /**
   * The turn answering a /kill that carried a stop context (queued at the front of the
   * channel). Default: this input again, with a note that the user stopped the reply.
   */
  readonly stopResponse?: (stop: StopContext) => TurnInput
}

/** The note a default stop response adds to the conversation. */
export const STOP_RESPONSE_NOTE =
  "[The user stopped your previous reply with /kill. Acknowledge it in one short sentence and do not continue the stopped reply.]"
