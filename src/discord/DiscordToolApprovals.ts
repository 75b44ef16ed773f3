import {
  ActionRowBuilder,
  ButtonBuilder,
  type ButtonInteraction,
  ButtonStyle,
  Events,
  type Interaction,
  type MessageEditOptions,
  MessageFlags,
  PermissionFlagsBits
} from "discord.js"
import { Duration, Effect, FiberSet, Layer, Option } from "effect"
import { ServerSettingsConfig } from "../config/ServerSettingsConfig"
import { ServerSettingsStore } from "../store/ServerSettingsStore"
import {
  type ApprovalOutcome,
  type ApprovalPrompt,
  type ApprovalRequest,
  matchesApprovalRules,
  ToolApprovals
} from "../tools/ToolApprovals"
import { makeApprovalDesk } from "./ApprovalDesk"
import { DiscordClient, NO_MENTIONS } from "./DiscordClient"
import { clip } from "./discordLimits"
import { thrownMessage } from "../domain/thrownMessage"

/** Custom ids of the buttons: `loopcord-approval:<question id>:approve|deny`. */
const PREFIX = "loopcord-approval:"
/** The posted question, as far as closing it needs. */
interface PostedQuestion {
  readonly edit: (options: MessageEditOptions) => Promise<unknown>
}

/** Characters of the call's arguments shown in the question. */
const ARGS_SHOWN = 800

const seconds = (duration: Duration.Duration) => Math.round(Duration.toSeconds(duration))

/** The question as posted (pure). */
const questionText = (request: ApprovalRequest, timeout: Duration.Duration): string => {
  const from = request.source?.kind === "mcp" ? ` (MCP server \`${request.source.server}\`)` : ""
  const args = clip(JSON.stringify(request.args, null, 1) ?? "{}", ARGS_SHOWN).replaceAll("```", "`\u200b``")
  return `🔐 <@${request.userId}>, I want to run **${request.toolName}**${from} with:\n\`\`\`json\n${args}\n\`\`\`\n` +
    `Approve or deny within ${seconds(timeout)} s. Only you or a member with Manage Server can answer.`
}

/** The question once it is over (pure): the call's fate, no buttons. */
const outcomeText = (request: ApprovalRequest, outcome: ApprovalOutcome, by: string | undefined, timeout: Duration.Duration): string => {
  const who = by === undefined ? "" : ` by <@${by}>`
  switch (outcome) {
    case "approved":
      return `✅ **${request.toolName}** approved${who}: it runs.`
    case "denied":
      return `⛔ **${request.toolName}** denied${who}: it did not run.`
    case "timed_out":
      return `⌛ Nobody answered within ${seconds(timeout)} s: **${request.toolName}** did not run.`
    case "stopped":
      return `⏹ The reply was stopped: **${request.toolName}** did not run.`
  }
}

/**
 * Tool approvals on Discord: a server's `/approvals` rules say which calls wait; the question is
 * a message with Approve / Deny buttons in the turn's channel, which only the member the reply is
 * for, or a member with Manage Server (checked at the press), can answer. Other presses get a
 * private refusal. Settings that cannot be read make the call wait (it is never run unasked).
 */
export const DiscordToolApprovals = Layer.effect(
  ToolApprovals,
  Effect.gen(function*() {
    const client = yield* DiscordClient
    const store = yield* ServerSettingsStore
    const { toolApprovalTimeout: timeout } = yield* ServerSettingsConfig
    const desk = yield* makeApprovalDesk()
    const run = yield* FiberSet.makeRuntime<never>()

    const onPress = (interaction: ButtonInteraction) =>
      Effect.gen(function*() {
        const [id = "", action = ""] = interaction.customId.slice(PREFIX.length).split(":")
        const answer = action === "approve" ? "approved" : "denied"
        const canManageServer = interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) === true
        const outcome = yield* desk.press(id, { userId: interaction.user.id, canManageServer }, answer)
        if (outcome === "taken") return yield* Effect.tryPromise(() => interaction.deferUpdate())
        const content = outcome === "not_allowed"
          ? "Only the member this reply is for, or a member with Manage Server, can answer this."
          : "This approval request is no longer waiting."
        yield* Effect.tryPromise(() => interaction.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: NO_MENTIONS }))
      }).pipe(Effect.catchCause((cause) => Effect.logWarning("answering an approval button failed", cause)))

    const listener = (interaction: Interaction) => {
      if (interaction.isButton() && interaction.customId.startsWith(PREFIX)) run(onPress(interaction))
    }
    client.on(Events.InteractionCreate, listener)
    yield* Effect.addFinalizer(() => Effect.sync(() => client.off(Events.InteractionCreate, listener)))

    const required = (request: ApprovalRequest): Effect.Effect<boolean> =>
      request.guildId === undefined
        ? Effect.succeed(false)
        : store.approvalRules(request.guildId).pipe(
          Effect.map((rules) => matchesApprovalRules(rules, request)),
          Effect.catch((error) =>
            Effect.as(Effect.logWarning(`approval rules unreadable; '${request.toolName}' waits for approval: ${error.message}`), true)
          )
        )

    const ask = (request: ApprovalRequest): Effect.Effect<Option.Option<ApprovalPrompt>> =>
      Effect.gen(function*() {
        const opened = yield* desk.open(request.userId)
        if (Option.isNone(opened)) return Option.none()
        const { answer, id } = opened.value
        const buttons = new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId(`${PREFIX}${id}:approve`).setLabel("Approve").setStyle(ButtonStyle.Success),
          new ButtonBuilder().setCustomId(`${PREFIX}${id}:deny`).setLabel("Deny").setStyle(ButtonStyle.Danger)
        )
        const posted = yield* Effect.tryPromise(async (): Promise<PostedQuestion> => {
          const channel = await client.channels.fetch(request.channelId)
          if (channel === null || !channel.isSendable()) throw new Error(`channel ${request.channelId} cannot be written to`)
          return channel.send({
            content: questionText(request, timeout),
            components: [buttons],
            allowedMentions: { parse: [], users: [request.userId], repliedUser: false },
            ...(request.messageId === undefined ? {} : { reply: { messageReference: request.messageId, failIfNotExists: false } })
          })
        }).pipe(Effect.result)
        if (posted._tag === "Failure") {
          yield* desk.close(id)
          yield* Effect.logWarning(`the approval question for '${request.toolName}' could not be posted: ${thrownMessage(posted.failure)}`)
          return Option.none()
        }
        const message = posted.success
        const prompt: ApprovalPrompt = {
          answer,
          close: (outcome, by) =>
            Effect.andThen(
              desk.close(id),
              Effect.tryPromise(() => message.edit({ content: outcomeText(request, outcome, by, timeout), components: [], allowedMentions: NO_MENTIONS })).pipe(
                Effect.catch((error) => Effect.logWarning(`the approval question could not be updated: ${error.message}`))
              )
            )
        }
        return Option.some(prompt)
      })

    return { timeout, required, ask }
  })
)
