import { type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect } from "effect"
import { CredentialStore, type KeyOwner, type StoredKey } from "../../store/CredentialStore"
import { GuildSettingsStore } from "../../store/GuildSettingsStore"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

/** `Manage Server` guards the server's key. */
const requireManageServer = (interaction: ChatInputCommandInteraction) =>
  Effect.tap(requireGuild(interaction), requirePermission(interaction, PermissionFlagsBits.ManageGuild, "Manage Server"))

/** Store failures as the user reads them; a malformed key or a missing LOOPCORD_SECRET_KEY says so. Never the key. */
const refusal = (error: { readonly _tag: string; readonly message: string }): CommandError => {
  switch (error._tag) {
    case "InvalidApiKeyError":
      return new CommandError({ detail: `That is not an API key: ${error.message}` })
    case "SecretKeyMissingError":
      return new CommandError({
        detail: "This bot cannot store API keys: its operator has not set LOOPCORD_SECRET_KEY (keys are only ever stored encrypted)."
      })
    default:
      return new CommandError({ detail: `Could not reach the key store: ${error.message}` })
  }
}

const describeKey = (stored: StoredKey): string => {
  switch (stored._tag) {
    case "None":
      return "not set"
    case "Usable":
      return `set <t:${Math.floor(stored.updatedAt / 1000)}:R>`
    case "Unusable":
      return "stored but unreadable (set it again)"
  }
}

/**
 * `/key personal|server|clear|optout|status`: who pays for this user's turns. Replies are private;
 * a key value is never echoed or logged, and it is stored sealed, never in plain text.
 */
export const keyCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const store = yield* CredentialStore
    const userId = interaction.user.id
    const personal: KeyOwner = { kind: "user", id: userId }
    switch (interaction.options.getSubcommand()) {
      case "personal": {
        yield* store.setKey(personal, interaction.options.getString("value", true), userId).pipe(Effect.mapError(refusal))
        return "✅ Your personal API key is saved (encrypted; nobody else sees it). Your messages now run on it. " +
          "When it fails, this server's key answers unless the server asks everyone to bring their own or you run `/key optout`."
      }
      case "server": {
        const guildId = yield* requireManageServer(interaction)
        yield* store.setKey({ kind: "guild", id: guildId }, interaction.options.getString("value", true), userId).pipe(Effect.mapError(refusal))
        return "✅ This server's API key is saved (encrypted). Members without a personal key now run on it."
      }
      case "clear": {
        const scope = interaction.options.getString("scope", true)
        if (scope === "server") {
          const guildId = yield* requireManageServer(interaction)
          const removed = yield* store.clearKey({ kind: "guild", id: guildId }).pipe(Effect.mapError(refusal))
          return removed ? "✅ This server's API key is removed; the bot's own keys answer again." : "This server has no API key set."
        }
        if (scope !== "personal") return yield* new CommandError({ detail: `Unknown scope '${scope}': use personal or server.` })
        const removed = yield* store.clearKey(personal).pipe(Effect.mapError(refusal))
        return removed ? "✅ Your personal API key is removed." : "You have no personal API key set."
      }
      case "optout": {
        const optOut = interaction.options.getBoolean("enabled") ?? true
        yield* store.setServerRouteOptOut(userId, optOut).pipe(Effect.mapError(refusal))
        return optOut
          ? "✅ When your personal key fails, the server's key will not answer for you: you see your key's error instead."
          : "✅ When your personal key fails, the server's key may answer for you again."
      }
      default: {
        const lines = [`Your personal key: ${describeKey(yield* store.getKey(personal).pipe(Effect.mapError(refusal)))}`]
        lines.push(`Fall back to the server's key when yours fails: ${(yield* store.serverRouteOptOut(userId).pipe(Effect.mapError(refusal))) ? "no (opted out)" : "yes"}`)
        if (interaction.guildId !== null) {
          const settings = yield* GuildSettingsStore
          lines.push(`This server's key: ${describeKey(yield* store.getKey({ kind: "guild", id: interaction.guildId }).pipe(Effect.mapError(refusal)))}`)
          const byok = yield* settings.isEnabled(interaction.guildId, "user_byok_mode").pipe(Effect.mapError(refusal))
          if (byok) lines.push("This server asks everyone to bring their own key (`user_byok_mode`).")
        }
        return lines.join("\n")
      }
    }
  })
