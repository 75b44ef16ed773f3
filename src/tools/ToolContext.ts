import { Context, type Effect } from "effect"
import type { TurnOrigin } from "../domain/TurnOrigin"
import type { TurnState } from "./TurnState"

/** A progress notice a tool shows the user while it works (e.g. "Fetching https://…"). */
type ProgressNotice = (text: string) => Effect.Effect<void>

/**
 * What a tool knows about the call it serves: the turn's TurnOrigin (ids only, never the Discord
 * objects: edges reach Discord through their own services, keyed by these ids) and the call's
 * own facts. Provided fresh per call.
 */
export interface ToolContextShape extends TurnOrigin {
  /** Provider family name (`LanguageModel.name`). */
  readonly provider: string
  readonly model: string
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

export class ToolContext extends Context.Service<ToolContext, ToolContextShape>()("loopcord/tools/ToolContext") {}
