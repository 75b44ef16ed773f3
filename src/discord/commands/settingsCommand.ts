import type { APIEmbed, ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import { type ModelChoices, ModelChoiceConfig } from "../../config/ModelChoiceConfig"
import { ServerSettingsConfig } from "../../config/ServerSettingsConfig"
import { EnabledChannelStore } from "../../store/EnabledChannelStore"
import { GUILD_CAPABILITIES, type GuildSettings, GuildSettingsStore } from "../../store/GuildSettingsStore"
import { type ApprovalRule, type ServerSettings, ServerSettingsStore } from "../../store/ServerSettingsStore"
import { clip } from "../discordLimits"
import { describeAccess } from "./accessCommand"
import { describeApprovals } from "./approvalsCommand"
import { CommandError } from "./commandReply"
import { describeModelChain, requireManageServer } from "./modelCommand"
import { describePersona } from "./personaCommand"
import { describeTriggers } from "./triggersCommand"

/** Discord's limit on one embed field's value. */
const FIELD_VALUE = 1024

interface EffectiveSettings {
  readonly server: ServerSettings
  readonly channelModels: ReadonlyArray<string> | undefined
  readonly approvals: ReadonlyArray<ApprovalRule>
  readonly capabilities: GuildSettings
  readonly enabledChannels: number
  readonly choices: ModelChoices
  readonly allowDms: boolean
  readonly defaultPersonaName: string
}

/** The server's effective settings as one embed (pure). */
const settingsEmbed = (settings: EffectiveSettings): APIEmbed => ({
  color: 0x5865f2,
  title: "This server's bot settings",
  fields: [
    { name: "Model", value: describeModelChain(settings.choices, settings.server.models, settings.channelModels) },
    { name: "Persona", value: describePersona(settings.server.persona, settings.defaultPersonaName) },
    {
      name: "Triggers",
      value: `${describeTriggers(settings.server.triggers, settings.allowDms)}\nChannels answering every message: ${settings.enabledChannels}`
    },
    { name: "Access", value: describeAccess(settings.server.access) },
    { name: "Tool approvals", value: describeApprovals(settings.approvals) },
    { name: "Capabilities", value: GUILD_CAPABILITIES.map((name) => `${settings.capabilities[name] ? "🟢" : "⚪"} \`${name}\``).join("\n") }
  ].map((field) => ({ name: field.name, value: clip(field.value, FIELD_VALUE) })),
  footer: { text: "Change them with /model, /persona, /triggers, /access, /approvals, /capabilities and /channel." }
})

/** `/settings`: everything this server set for its bot, in one embed (Manage Server). */
export const settingsCommand = (interaction: ChatInputCommandInteraction, defaultPersonaName: string) =>
  Effect.gen(function*() {
    const guildId = yield* requireManageServer(interaction)
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    const store = yield* ServerSettingsStore
    const [server, channelModels, approvals, capabilities, enabled] = yield* Effect.all([
      store.get(guildId),
      store.channelModels(guildId, [interaction.channelId]),
      store.approvalRules(guildId),
      Effect.flatMap(GuildSettingsStore, (capabilityStore) => capabilityStore.get(guildId)),
      Effect.flatMap(EnabledChannelStore, (channels) => channels.list(guildId))
    ]).pipe(Effect.mapError(failed))
    return settingsEmbed({
      server,
      channelModels,
      approvals,
      capabilities,
      enabledChannels: enabled.length,
      choices: yield* ModelChoiceConfig,
      allowDms: (yield* ServerSettingsConfig).allowDms,
      defaultPersonaName
    })
  })
