import { Context, type Effect } from "effect"
import type { TurnState } from "./TurnState"

/** A progress notice a tool shows the user while it works (e.g. "Fetching https://…"). */
export type ProgressNotice = (text: string) => Effect.Effect<void>

/**
 * What a tool knows about the call it serves (spec §1.6, without the Discord objects: edges
 * reach Discord through their own services, keyed by these ids). Provided fresh per call.
 */
export interface ToolContextShape {
  readonly channelId: string
  readonly guildId: string | undefined
  /** Front id of the user who triggered the turn. */
  readonly userId: string
  /** Front id of the message that triggered the turn, when there is one. */
  readonly messageId: string | undefined
  readonly isDM: boolean
  /** Provider family name (`LanguageModel.name`). */
  readonly provider: string
  readonly model: string
  readonly locale: string
  readonly personaId: string | undefined
  readonly personaName: string
  readonly personaAvatarUrl: string | undefined
  readonly isUserImpersonation: boolean
  readonly impersonatedUserId: string | undefined
  /** True when user-facing errors are not surfaced for this attempt (progress notices stay quiet). */
  readonly suppressProgressNotices: boolean
  /** True once the loop reached the soft-warning iteration: tools may remind the user of /kill. */
  readonly showKillHint: boolean
  readonly iteration: number
  /** Live turn state (flags, context items). */
  readonly turnState: TurnState
  /**
   * Fires when this call is abandoned: /kill, the tool timeout, or interruption. Promise-based
   * tools pass it to fetch/SDK calls so cancellation reaches the wire. Effect-based tools are
   * interrupted directly and need not look at it.
   */
  readonly abortSignal: AbortSignal
  /** Completes when the turn is killed (/kill). */
  readonly killed: Effect.Effect<void>
  readonly progress: ProgressNotice
}

export class ToolContext extends Context.Tag("loopcord/tools/ToolContext")<ToolContext, ToolContextShape>() {}
