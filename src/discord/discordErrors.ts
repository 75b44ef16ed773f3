import { DiscordAPIError, HTTPError } from "discord.js"
import { Data } from "effect"
import { DeliveryError } from "../loop/ResponseSink"

/** Discord JSON error codes the front reacts to. */
export const DiscordErrorCode = {
  UnknownChannel: 10003,
  UnknownMessage: 10008,
  UnknownWebhook: 10015,
  /** "Message is too old to edit" (Discord lets messages be edited for a limited time only). */
  MessageTooOldToEdit: 30046,
  MissingAccess: 50001,
  MissingPermissions: 50013
} as const

/** The Discord JSON error code of a failed request, if it was one. */
export const discordErrorCode = (error: unknown): number | undefined =>
  error instanceof DiscordAPIError && typeof error.code === "number" ? error.code : undefined

const describe = (error: unknown): string => {
  const text = error instanceof Error ? error.message : String(error)
  const code = discordErrorCode(error)
  return code === undefined ? text : `${text} (${code})`
}

/**
 * What a refused send or edit means for the reply (docs/architecture.md, Delivery):
 * - `gone`: the message no longer exists (10008, someone deleted it): its text is posted again;
 * - `frozen`: the message stays as it is but can no longer be edited (30046 too old, 10015 the
 *   webhook that posted it is gone): the rest of its text continues in a new message;
 * - `transient`: a server error or a network failure that discord.js's own retries did not get
 *   through: the same write is tried again after a pause;
 * - `final`: the channel is gone (10003), access or permissions are lost (50001, 50013), or
 *   anything else Discord refuses: the reply cannot be delivered.
 */
export type WriteFailureKind = "gone" | "frozen" | "transient" | "final"

/** A send or edit Discord refused, classified (ReplyTarget's error; the reply sink acts on `kind`). */
export class ReplyWriteError extends Data.TaggedError("ReplyWriteError")<{
  readonly kind: WriteFailureKind
  /** What the loop is told when the failure ends delivery. */
  readonly reason: DeliveryError["reason"]
  readonly detail: string
}> {}

/** The reason a loop sees for a final failure: an unknown channel was deleted, missing access or permissions lock the bot out. */
const deliveryReason = (error: unknown): DeliveryError["reason"] => {
  const code = discordErrorCode(error)
  if (code === DiscordErrorCode.UnknownChannel) return "channel_deleted"
  if (code === DiscordErrorCode.MissingAccess || code === DiscordErrorCode.MissingPermissions) return "missing_access"
  return "failed"
}

/** Classifies what a `send` (post a message) or an `edit` (of a message posted earlier) failed with. */
export const classifyWriteError = (error: unknown, operation: "send" | "edit"): ReplyWriteError => {
  const detail = describe(error)
  const code = discordErrorCode(error)
  const failure = (kind: WriteFailureKind) => new ReplyWriteError({ kind, reason: deliveryReason(error), detail })
  if (error instanceof DiscordAPIError) {
    if (operation === "edit" && code === DiscordErrorCode.UnknownMessage) return failure("gone")
    if (operation === "edit" && (code === DiscordErrorCode.MessageTooOldToEdit || code === DiscordErrorCode.UnknownWebhook)) return failure("frozen")
    return failure("final")
  }
  // discord.js throws HTTPError for a 5xx once its own retries are used up.
  if (error instanceof HTTPError) return failure(error.status >= 500 ? "transient" : "final")
  // Anything else is the network (reset, refused, timed out) after discord.js's retries.
  return failure("transient")
}

/** The loop's view of a failure that ends delivery. */
export const toDeliveryError = (error: ReplyWriteError): DeliveryError => new DeliveryError({ reason: error.reason, detail: error.detail })
