import { Option } from "effect"

/** Why the bot answers a message. */
export type TriggerReason = "dm" | "mention" | "reply" | "enabled_channel"

/** What decides whether a message is a trigger (read off the discord.js Message and the store). */
export interface TriggerFacts {
  /** Bots (this one included) and webhooks never trigger: no loops between bots or personas. */
  readonly fromBotOrWebhook: boolean
  /** Joins, pins, boosts… */
  readonly isSystem: boolean
  readonly isDM: boolean
  /** The bot (or its managed role) is mentioned directly; `@everyone` does not count. */
  readonly mentionsBot: boolean
  /** A reply to one of the bot's own messages (its persona webhook's included). */
  readonly repliesToBot: boolean
  /** `/channel enable` was used here (or on the thread's parent). */
  readonly channelEnabled: boolean
  /** The persona muted or blocked the author (store predicate). */
  readonly authorMuted: boolean
}

/** Whether to answer, and why (pure). */
export const triggerReason = (facts: TriggerFacts): Option.Option<TriggerReason> => {
  if (facts.fromBotOrWebhook || facts.isSystem || facts.authorMuted) return Option.none()
  if (facts.isDM) return Option.some("dm")
  if (facts.mentionsBot) return Option.some("mention")
  if (facts.repliesToBot) return Option.some("reply")
  if (facts.channelEnabled) return Option.some("enabled_channel")
  return Option.none()
}
