import type { ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import type { ChannelQueue } from "../../chat/ChannelQueue"
import { replyPrivately } from "./commandReply"

/** What /kill tells the user who ran it (pure). */
export const killSummary = (outcome: { readonly cancelled: number; readonly killed: boolean }): string => {
  if (!outcome.killed && outcome.cancelled === 0) return "Nothing is running in this channel."
  const parts = [
    ...(outcome.killed ? ["stopped the reply"] : []),
    ...(outcome.cancelled > 0 ? [`cancelled ${outcome.cancelled} queued ${outcome.cancelled === 1 ? "reply" : "replies"}`] : [])
  ]
  return `⏹ ${parts.join(" and ").replace(/^./, (first) => first.toUpperCase())}.`
}

/**
 * `/kill`: stops the channel's turns at once (queued ones are cancelled first, then the running
 * stream and tool are aborted), before acknowledging; the partial reply stays, marked stopped,
 * and the stop response is queued at the front of the channel (docs/architecture.md, /kill).
 */
export const killCommand = (interaction: ChatInputCommandInteraction, queue: ChannelQueue["Service"]) =>
  Effect.gen(function*() {
    const requesterId = interaction.user.id
    const outcome = yield* queue.kill(interaction.channelId, {
      requesterId,
      stopContext: { requesterId, originalMessageId: interaction.id }
    })
    yield* Effect.logInfo(`/kill: ${killSummary(outcome)}`).pipe(Effect.annotateLogs({ channelId: interaction.channelId, requesterId }))
    yield* replyPrivately(interaction, Effect.succeed(killSummary(outcome)))
  })
