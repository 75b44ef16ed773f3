import type { APIEmbed } from "discord.js"
import { Effect, FiberSet, Layer } from "effect"
import { DiscordConfig } from "../config/DiscordConfig"
import { type HiddenNotice, ThoughtLog } from "../loop/ThoughtLog"
import { DiscordClient, NO_MENTIONS } from "./DiscordClient"
import { clip, DiscordLimit } from "./discordLimits"

const Color = { info: 0x5865f2, error: 0xe74c3c } as const


/** A hidden notice as an operator sees it in the thought-log channel (pure). */
const hiddenNoticeEmbed = (notice: HiddenNotice): APIEmbed => ({
  color: notice.severity === "error" ? Color.error : Color.info,
  title: clip(notice.title, DiscordLimit.embedTitle),
  description: clip(
    notice.details === undefined ? notice.description : `${notice.description}\n\`\`\`json\n${notice.details.replaceAll("```", "`\u200b``")}\n\`\`\``,
    DiscordLimit.embedDescription
  ),
  footer: { text: clip(`${notice.kind} · channel ${notice.channelId}${notice.guildId === undefined ? "" : ` · guild ${notice.guildId}`}`, DiscordLimit.embedFooter) }
})

/**
 * Hidden notices as embeds in `THOUGHT_LOG_CHANNEL_ID` when it is set, else in the log.
 * Posting never holds up the turn (it runs beside it); a failed post falls back to the log.
 */
export const DiscordThoughtLog = Layer.effect(
  ThoughtLog,
  Effect.gen(function*() {
    const config = yield* DiscordConfig
    const logged = yield* Effect.provide(ThoughtLog, ThoughtLog.logged)
    const channelId = config.thoughtLogChannelId
    if (channelId === undefined) return logged
    const client = yield* DiscordClient
    const run = yield* FiberSet.makeRuntime<never>()
    const postToChannel = (notice: HiddenNotice) =>
      Effect.tryPromise(async () => {
        const channel = await client.channels.fetch(channelId)
        if (channel === null || !channel.isSendable()) throw new Error(`THOUGHT_LOG_CHANNEL_ID ${channelId} is not a channel the bot can post in`)
        await channel.send({ embeds: [hiddenNoticeEmbed(notice)], allowedMentions: NO_MENTIONS })
      }).pipe(
        Effect.catch((error) =>
          Effect.andThen(Effect.logWarning(`thought log post failed: ${error.message}`), logged.post(notice))
        )
      )
    return {
      post: (notice) => Effect.sync(() => {
        run(postToChannel(notice))
      })
    }
  })
)
