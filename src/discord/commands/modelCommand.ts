import { type AutocompleteInteraction, type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect, Result } from "effect"
import { describeAllowed, effectiveChain, type ModelChoices, ModelChoiceConfig, parseModelChain } from "../../config/ModelChoiceConfig"
import { ServerSettingsStore } from "../../store/ServerSettingsStore"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

/** Discord's limits on autocomplete answers. */
const MAX_CHOICES = 25
const CHOICE_LENGTH = 100

const chainText = (chain: ReadonlyArray<string>) => chain.map((model) => `\`${model}\``).join(" → ")

const storeFailed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })

/** Manage Server, checked on every use (Discord lets admins hand the command to others). */
export const requireManageServer = (interaction: ChatInputCommandInteraction) =>
  Effect.tap(requireGuild(interaction), requirePermission(interaction, PermissionFlagsBits.ManageGuild, "Manage Server"))

/** The chain a channel of the server runs on, and where it comes from. */
export const describeModelChain = (
  choices: ModelChoices,
  server: ReadonlyArray<string> | undefined,
  channel: ReadonlyArray<string> | undefined
): string => {
  const inChannel = effectiveChain(choices, channel)
  const inServer = effectiveChain(choices, server)
  if (inChannel !== undefined) return `${chainText(inChannel)} (this channel's choice)`
  if (inServer !== undefined) return `${chainText(inServer)} (this server's choice)`
  return `${chainText(choices.defaults)} (the bot's default)`
}

/**
 * `/model set|reset|show`: the server's model chain, or one channel's, from the models the
 * operator allows (`LLM_MODELS_ALLOWED`). Stored per server; a channel's choice wins in it.
 */
export const modelCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireManageServer(interaction)
    const store = yield* ServerSettingsStore
    const choices = yield* ModelChoiceConfig
    const userId = interaction.user.id
    const channelOnly = interaction.options.getBoolean("channel") ?? false
    switch (interaction.options.getSubcommand()) {
      case "set": {
        const parsed = parseModelChain(choices, interaction.options.getString("models", true))
        if (Result.isFailure(parsed)) return yield* new CommandError({ detail: parsed.failure })
        if (channelOnly) {
          const outcome = yield* store.setChannelModels(guildId, interaction.channelId, parsed.success, userId).pipe(Effect.mapError(storeFailed))
          if (outcome === "full") return yield* new CommandError({ detail: "This server has too many channels with their own model; reset some first." })
          return `✅ In <#${interaction.channelId}> I now answer with ${chainText(parsed.success)}.`
        }
        yield* store.setModels(guildId, parsed.success, userId).pipe(Effect.mapError(storeFailed))
        return `✅ This server now runs on ${chainText(parsed.success)}${parsed.success.length > 1 ? " (the first, then the others when it fails)" : ""}.`
      }
      case "reset": {
        if (channelOnly) {
          yield* store.setChannelModels(guildId, interaction.channelId, undefined, userId).pipe(Effect.mapError(storeFailed))
          return `✅ <#${interaction.channelId}> follows the server's model again.`
        }
        yield* store.setModels(guildId, undefined, userId).pipe(Effect.mapError(storeFailed))
        const cleared = yield* store.clearChannelModels(guildId).pipe(Effect.mapError(storeFailed))
        return `✅ This server runs on the bot's default again: ${chainText(choices.defaults)}` +
          (cleared > 0 ? ` (${cleared} channel choice${cleared === 1 ? "" : "s"} cleared too).` : ".")
      }
      default: {
        const settings = yield* store.get(guildId).pipe(Effect.mapError(storeFailed))
        const channel = yield* store.channelModels(guildId, [interaction.channelId]).pipe(Effect.mapError(storeFailed))
        return `Here: ${describeModelChain(choices, settings.models, channel)}\nAllowed: ${describeAllowed(choices)}`
      }
    }
  })

/**
 * Suggestions for `/model set models:`: the allowed models matching what is being typed, after
 * the models already listed (`a, b, gp` offers `a, b, gpt-4o`). Pure.
 */
export const modelSuggestions = (choices: ModelChoices, typed: string): ReadonlyArray<{ readonly name: string; readonly value: string }> => {
  const parts = typed.split(",")
  const current = (parts.pop() ?? "").trim().toLowerCase()
  const chosen = parts.map((part) => part.trim()).filter((part) => part.length > 0)
  const prefix = chosen.length === 0 ? "" : `${chosen.join(", ")}, `
  const candidates = choices.allowed.filter((model) => !chosen.includes(model))
  const ranked = [
    ...candidates.filter((model) => model.toLowerCase().startsWith(current)),
    ...candidates.filter((model) => !model.toLowerCase().startsWith(current) && model.toLowerCase().includes(current))
  ]
  return ranked
    .map((model) => `${prefix}${model}`)
    .filter((value) => value.length <= CHOICE_LENGTH)
    .slice(0, MAX_CHOICES)
    .map((value) => ({ name: value, value }))
}

/** Answers the autocomplete of `/model set models:`. */
export const modelAutocomplete = (interaction: AutocompleteInteraction) =>
  Effect.gen(function*() {
    const choices = yield* ModelChoiceConfig
    const focused = interaction.options.getFocused(true)
    const suggestions = focused.name === "models" ? modelSuggestions(choices, String(focused.value)) : []
    yield* Effect.tryPromise(() => interaction.respond([...suggestions]))
  })
