import { type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect } from "effect"
import { GUILD_CAPABILITIES, GuildSettingsStore, isGuildCapability } from "../../store/GuildSettingsStore"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

const explanation: Readonly<Record<(typeof GUILD_CAPABILITIES)[number], string>> = {
  user_blocking_enabled: "the persona may mute or block users (block_user / unblock_user)",
  deliberate_tool_mode: "tools are offered only when a message asks for them",
  server_wide_memory: "one short-term memory for the whole server (off: each channel keeps its own, threads share their channel's)",
  user_byok_mode: "everyone brings their own API key (/key personal); the server's key is never used for them",
  reasoning_as_spoiler: "the model's reasoning is shown after its reply, behind a spoiler",
  reasoning_as_file: "the model's reasoning is attached after its reply as a .txt file"
}

/** `/capabilities show|manage`: the guild's opt-in settings. */
export const capabilitiesCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireGuild(interaction)
    yield* requirePermission(interaction, PermissionFlagsBits.ManageGuild, "Manage Server")
    const store = yield* GuildSettingsStore
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    if (interaction.options.getSubcommand() === "manage") {
      const name = interaction.options.getString("capability", true)
      if (!isGuildCapability(name)) return yield* new CommandError({ detail: `Unknown capability '${name}'.` })
      const enabled = interaction.options.getBoolean("enabled", true)
      yield* store.setCapability(guildId, name, enabled).pipe(Effect.mapError(failed))
      return `✅ \`${name}\` is now **${enabled ? "on" : "off"}**: ${explanation[name]}.`
    }
    const settings = yield* store.get(guildId).pipe(Effect.mapError(failed))
    return GUILD_CAPABILITIES.map((name) => `${settings[name] ? "🟢" : "⚪"} \`${name}\`: ${explanation[name]}`).join("\n")
  })
