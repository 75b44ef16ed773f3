import { type APIEmbed, type ChatInputCommandInteraction, MessageFlags } from "discord.js"
import { Data, Effect } from "effect"
import { NO_MENTIONS } from "../DiscordClient"
import { clip, DiscordLimit } from "../discordLimits"

/** A command refused or failed; `message` is shown to the user who ran it. */
export class CommandError extends Data.TaggedError("CommandError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}


export const requireGuild = (interaction: ChatInputCommandInteraction): Effect.Effect<string, CommandError> =>
  interaction.guildId === null
    ? Effect.fail(new CommandError({ detail: "This command only works in a server." }))
    : Effect.succeed(interaction.guildId)

/** Default member permissions hide a command, but Discord lets admins change that: check again here. */
export const requirePermission = (
  interaction: ChatInputCommandInteraction,
  permission: bigint,
  permissionName: string
): Effect.Effect<void, CommandError> =>
  interaction.memberPermissions?.has(permission) === true
    ? Effect.void
    : Effect.fail(new CommandError({ detail: `You need the ${permissionName} permission to use /${interaction.commandName}.` }))

/**
 * Answers a command privately: acknowledges at once (Discord allows 3 s), runs `work`, then
 * shows its text, or the CommandError's message. Other failures are logged and shown briefly.
 */
export const replyPrivately = <R>(
  interaction: ChatInputCommandInteraction,
  work: Effect.Effect<string, CommandError, R>
): Effect.Effect<void, unknown, R> =>
  Effect.gen(function*() {
    yield* Effect.tryPromise(() => interaction.deferReply({ flags: MessageFlags.Ephemeral }))
    const text = yield* work.pipe(
      Effect.catchTag("CommandError", (error) => Effect.succeed(`⚠️ ${error.message}`)),
      Effect.catchCause((cause) =>
        Effect.as(Effect.logError(`/${interaction.commandName} failed`, cause), "⚠️ Something went wrong; the error was logged.")
      )
    )
    yield* Effect.tryPromise(() => interaction.editReply({ content: clip(text, DiscordLimit.content), allowedMentions: NO_MENTIONS }))
  })

/** `replyPrivately` for a command whose answer is an embed (the refusal stays plain text). */
export const replyPrivatelyWithEmbed = <R>(
  interaction: ChatInputCommandInteraction,
  work: Effect.Effect<APIEmbed, CommandError, R>
): Effect.Effect<void, unknown, R> =>
  Effect.gen(function*() {
    yield* Effect.tryPromise(() => interaction.deferReply({ flags: MessageFlags.Ephemeral }))
    const answer = yield* work.pipe(
      Effect.map((embed) => ({ content: "", embeds: [embed] })),
      Effect.catchTag("CommandError", (error) => Effect.succeed({ content: `⚠️ ${error.message}`, embeds: [] })),
      Effect.catchCause((cause) =>
        Effect.as(Effect.logError(`/${interaction.commandName} failed`, cause), { content: "⚠️ Something went wrong; the error was logged.", embeds: [] })
      )
    )
    yield* Effect.tryPromise(() => interaction.editReply({ content: clip(answer.content, DiscordLimit.content), embeds: answer.embeds, allowedMentions: NO_MENTIONS }))
  })
