import type { ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import { type ServerPersona, ServerLimits, ServerSettingsStore } from "../../store/ServerSettingsStore"
import { clip } from "../discordLimits"
import { CommandError } from "./commandReply"
import { requireManageServer } from "./modelCommand"

/** An avatar Discord can show: an https URL with a host, no spaces, bounded. Left: why not. */
export const avatarUrlProblem = (raw: string): string | undefined => {
  if (raw.length > ServerLimits.avatarUrl) return `The avatar URL is longer than ${ServerLimits.avatarUrl} characters.`
  if (!/^https:\/\/\S+$/.test(raw)) return "The avatar must be an https:// URL of an image."
  try {
    const url = new URL(raw)
    return url.protocol === "https:" && url.hostname.length > 0 && url.username === "" && url.password === ""
      ? undefined
      : "The avatar must be an https:// URL of an image."
  } catch {
    return "The avatar must be an https:// URL of an image."
  }
}

/** The persona fields an admin gave (trimmed; blank counts as not given), checked against the bounds. */
export const personaUpdate = (
  current: ServerPersona,
  given: { readonly name: string | null; readonly avatar: string | null; readonly prompt: string | null }
): ServerPersona | CommandError => {
  const text = (value: string | null) => (value === null || value.trim().length === 0 ? undefined : value.trim())
  const name = text(given.name)
  const avatar = text(given.avatar)
  const prompt = text(given.prompt)
  if (name === undefined && avatar === undefined && prompt === undefined) {
    return new CommandError({ detail: "Give a name, an avatar or a prompt (or use /persona reset)." })
  }
  if (name !== undefined && name.length > ServerLimits.personaName) {
    return new CommandError({ detail: `The name is longer than ${ServerLimits.personaName} characters.` })
  }
  if (prompt !== undefined && prompt.length > ServerLimits.personaPrompt) {
    return new CommandError({ detail: `The prompt is longer than ${ServerLimits.personaPrompt} characters.` })
  }
  const problem = avatar === undefined ? undefined : avatarUrlProblem(avatar)
  if (problem !== undefined) return new CommandError({ detail: problem })
  return {
    name: name ?? current.name,
    avatarUrl: avatar ?? current.avatarUrl,
    systemPrompt: prompt ?? current.systemPrompt
  }
}

export const describePersona = (persona: ServerPersona, defaultName: string): string => {
  const lines = [
    `Name: ${persona.name === undefined ? `${defaultName} (the bot's default)` : `**${persona.name}** (replies come through a channel webhook)`}`,
    `Avatar: ${persona.avatarUrl ?? "the bot's"}`,
    `Prompt: ${persona.systemPrompt === undefined ? "the bot's default" : `${persona.systemPrompt.length} characters: “${clip(persona.systemPrompt.replace(/\s+/g, " "), 200)}”`}`
  ]
  return lines.join("\n")
}

/**
 * `/persona set|reset|show`: the server's persona. A name makes replies come as the persona
 * (its name and avatar) through the channel's webhook; the prompt replaces the bot's.
 */
export const personaCommand = (interaction: ChatInputCommandInteraction, defaultName: string) =>
  Effect.gen(function*() {
    const guildId = yield* requireManageServer(interaction)
    const store = yield* ServerSettingsStore
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    const current = (yield* store.get(guildId).pipe(Effect.mapError(failed))).persona
    switch (interaction.options.getSubcommand()) {
      case "set": {
        const next = personaUpdate(current, {
          name: interaction.options.getString("name"),
          avatar: interaction.options.getString("avatar"),
          prompt: interaction.options.getString("prompt")
        })
        if (next instanceof CommandError) return yield* next
        yield* store.setPersona(guildId, next, interaction.user.id).pipe(Effect.mapError(failed))
        return `✅ This server's persona is set.\n${describePersona(next, defaultName)}`
      }
      case "reset": {
        yield* store.setPersona(guildId, { name: undefined, avatarUrl: undefined, systemPrompt: undefined }, interaction.user.id).pipe(Effect.mapError(failed))
        return `✅ This server uses the bot's own persona again (${defaultName}).`
      }
      default:
        return describePersona(current, defaultName)
    }
  })
