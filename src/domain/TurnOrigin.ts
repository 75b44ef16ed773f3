import type { Persona } from "./Persona"

/**
 * Who and where one turn is: the message being answered, its place, its user and the persona
 * that answers. The one record of these facts: the front's TurnInput, the loop's CurrentTurn
 * and a tool's ToolContext are views of it (each adds what only it knows).
 */
export interface TurnOrigin {
  readonly channelId: string
  /**
   * The channel `channelId` belongs to when it is a thread (Discord threads and forum posts):
   * the thread shares that channel's short-term memory. Absent for channels and DMs.
   */
  readonly parentChannelId?: string | undefined
  readonly guildId: string | undefined
  /** Front id of the user who triggered the turn. */
  readonly userId: string
  /** Front id of the message being answered, when there is one. */
  readonly messageId: string | undefined
  readonly isDM: boolean
  readonly locale: string
  readonly persona: Persona
  /** The reply is written as a user (impersonation), not as the persona. */
  readonly isUserImpersonation: boolean
  readonly impersonatedUserId: string | undefined
}

/** The origin part of a wider record (a TurnInput, a CurrentTurn), field for field. */
export const turnOriginOf = (source: TurnOrigin): TurnOrigin => ({
  channelId: source.channelId,
  ...(source.parentChannelId === undefined ? {} : { parentChannelId: source.parentChannelId }),
  guildId: source.guildId,
  userId: source.userId,
  messageId: source.messageId,
  isDM: source.isDM,
  locale: source.locale,
  persona: source.persona,
  isUserImpersonation: source.isUserImpersonation,
  impersonatedUserId: source.impersonatedUserId
})
