import { DiscordAPIError } from "discord.js"
import { DeliveryError } from "../loop/ResponseSink"

/** Discord JSON error codes the front reacts to. */
export const DiscordErrorCode = {
  UnknownChannel: 10003,
  UnknownMessage: 10008,
  UnknownWebhook: 10015,
  MissingAccess: 50001,
  MissingPermissions: 50013
} as const

/** The Discord JSON error code of a failed request, if it was one. */
export const discordErrorCode = (error: unknown): number | undefined =>
  error instanceof DiscordAPIError && typeof error.code === "number" ? error.code : undefined

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * A failed send or edit as the loop sees it: an unknown channel means it was deleted, missing
 * access or permissions mean the bot can no longer write there (both end the turn).
 */
export const toDeliveryError = (error: unknown): DeliveryError => {
  const code = discordErrorCode(error)
  if (code === DiscordErrorCode.UnknownChannel) return new DeliveryError({ reason: "channel_deleted", detail: describe(error) })
  if (code === DiscordErrorCode.MissingAccess || code === DiscordErrorCode.MissingPermissions) {
    return new DeliveryError({ reason: "missing_access", detail: describe(error) })
  }
  return new DeliveryError({ reason: "failed", detail: describe(error) })
}
