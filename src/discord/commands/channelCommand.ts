import { type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect } from "effect"
import { EnabledChannelStore } from "../../store/EnabledChannelStore"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

/** `/channel enable|disable`: answer every message here, or only mentions and replies. */
export const channelCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireGuild(interaction)
    yield* requirePermission(interaction, PermissionFlagsBits.ManageChannels, "Manage Channels")
    const store = yield* EnabledChannelStore
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not save the setting: ${error.message}` })
    if (interaction.options.getSubcommand() === "enable") {
      yield* store.enable(guildId, interaction.channelId, interaction.user.id).pipe(Effect.mapError(failed))
      return `✅ I'll answer every message in <#${interaction.channelId}> now.`
    }
    const wasEnabled = yield* store.disable(guildId, interaction.channelId).pipe(Effect.mapError(failed))
    return wasEnabled
      ? `✅ In <#${interaction.channelId}> I'll answer only mentions and replies now.`
      : `<#${interaction.channelId}> was not enabled: I answer only mentions and replies here.`
  })
