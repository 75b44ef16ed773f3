import { MessageFlags, Routes, type SendableChannels } from "discord.js"
import { Effect } from "effect"
import { MediaDeliveryError, type MediaOutlet, type OutgoingMedia } from "../tools/MediaOutlet"
import { discordErrorCode, DiscordErrorCode } from "./discordErrors"

/** Discord's "Request entity too large" code: the file is over the upload limit. */
const ENTITY_TOO_LARGE = 40005

const explain = (error: unknown): string => {
  const code = discordErrorCode(error)
  if (code === DiscordErrorCode.MissingPermissions) return "the bot may not attach files here (Attach Files permission)"
  if (code === DiscordErrorCode.MissingAccess) return "the bot can no longer write in this channel"
  if (code === ENTITY_TOO_LARGE) return "the file is larger than this server's upload limit"
  return error instanceof Error ? error.message : String(error)
}

/**
 * The create-message request of one file: its attachment entry (a voice message's with
 * `duration_secs` and `waveform`, and the IS_VOICE_MESSAGE flag with no text), the reply to the
 * trigger that pings nobody, and the file with its real content type (discord.js would guess
 * `application/ogg` for Ogg, which is not a voice message).
 */
const mediaRequest = (media: OutgoingMedia, replyTo: string | undefined) => {
  const voice = media.kind === "voice" && media.voice !== undefined ? media.voice : undefined
  return {
    body: {
      attachments: [{
        id: "0",
        filename: media.filename,
        ...(voice === undefined ? {} : { duration_secs: voice.durationSecs, waveform: voice.waveform })
      }],
      ...(voice === undefined ? {} : { flags: MessageFlags.IsVoiceMessage }),
      allowed_mentions: { parse: [], replied_user: false },
      ...(replyTo === undefined ? {} : { message_reference: { message_id: replyTo, fail_if_not_exists: false } })
    },
    files: [{ name: media.filename, data: Buffer.from(media.bytes), contentType: media.mimeType }]
  }
}

/**
 * A Discord turn's media outlet: each file goes out as its own message from the bot in the
 * channel (a multipart upload), replying to the trigger without a ping. Voice messages are real
 * ones (IS_VOICE_MESSAGE, `duration_secs`, `waveform`), which webhooks cannot send.
 */
export const discordMediaOutlet = (channel: SendableChannels, replyTo: string | undefined): MediaOutlet => ({
  deliver: (media) =>
    Effect.tryPromise({
      try: () => channel.client.rest.post(Routes.channelMessages(channel.id), mediaRequest(media, replyTo)),
      catch: (error) => new MediaDeliveryError({ detail: explain(error) })
    }).pipe(Effect.map((sent) => {
      const id = typeof sent === "object" && sent !== null && "id" in sent && typeof sent.id === "string" ? sent.id : undefined
      return id === undefined ? {} : { messageId: id }
    }))
})
