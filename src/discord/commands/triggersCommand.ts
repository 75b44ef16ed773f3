import type { ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import { ServerSettingsConfig } from "../../config/ServerSettingsConfig"
import { type ServerTriggers, ServerSettingsStore } from "../../store/ServerSettingsStore"
import { CommandError } from "./commandReply"
import { requireManageServer } from "./modelCommand"

const onOff = (value: boolean) => (value ? "on" : "off")

export const describeTriggers = (triggers: ServerTriggers, allowDms: boolean): string =>
  [
    `Mentions: **${onOff(triggers.mentions)}**`,
    `Replies to the bot: **${onOff(triggers.replies)}**`,
    `Channels enabled with /channel: **${onOff(triggers.channels)}**`,
    `Direct messages (the bot's operator decides): **${onOff(allowDms)}**`
  ].join("\n")

/** `/triggers set|show`: which messages the bot answers in this server (each kind on by default). */
export const triggersCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireManageServer(interaction)
    const store = yield* ServerSettingsStore
    const { allowDms } = yield* ServerSettingsConfig
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    const current = (yield* store.get(guildId).pipe(Effect.mapError(failed))).triggers
    if (interaction.options.getSubcommand() !== "set") return describeTriggers(current, allowDms)
    const mentions = interaction.options.getBoolean("mentions")
    const replies = interaction.options.getBoolean("replies")
    const channels = interaction.options.getBoolean("channels")
    if (mentions === null && replies === null && channels === null) {
      return yield* new CommandError({ detail: "Choose at least one of mentions, replies or channels." })
    }
    const next: ServerTriggers = {
      mentions: mentions ?? current.mentions,
      replies: replies ?? current.replies,
      channels: channels ?? current.channels
    }
    yield* store.setTriggers(guildId, next, interaction.user.id).pipe(Effect.mapError(failed))
    return `✅ Triggers saved.\n${describeTriggers(next, allowDms)}`
  })
