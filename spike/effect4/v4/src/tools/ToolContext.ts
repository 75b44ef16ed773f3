import { Context, type Effect } from "effect"
import type { TurnState } from "./TurnState"

export type ProgressNotice = (text: string) => Effect.Effect<void>

/** What a tool knows about the call it serves. Provided fresh per call. */
export interface ToolContextShape {
  readonly channelId: string
  readonly guildId: string | undefined
  readonly userId: string
  readonly messageId: string | undefined
  readonly isDM: boolean
  readonly provider: string
  readonly model: string
  readonly locale: string
  readonly personaId: string | undefined
  readonly personaName: string
  readonly personaAvatarUrl: string | undefined
  readonly isUserImpersonation: boolean
  readonly impersonatedUserId: string | undefined
  readonly suppressProgressNotices: boolean
  readonly showKillHint: boolean
  readonly iteration: number
  readonly turnState: TurnState
  readonly abortSignal: AbortSignal
  readonly killed: Effect.Effect<void>
  readonly progress: ProgressNotice
}

export class ToolContext extends Context.Service<ToolContext, ToolContextShape>()("loopcord/tools/ToolContext") {}
