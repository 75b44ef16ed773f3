import { type ChatInputCommandInteraction, PermissionFlagsBits } from "discord.js"
import { Effect } from "effect"
import { GuildMcpAdmin, type GuildMcpServerView } from "../../mcp/GuildMcpAdmin"
import type { GuildMcpServerType } from "../../mcp/GuildMcpRegistry"
import { CommandError, requireGuild, requirePermission } from "./commandReply"

const SERVER_TYPES: ReadonlyArray<GuildMcpServerType> = ["generic", "url_fetcher", "web_search"]

/** `Name: value` → one header; the value is a secret and never echoed. */
export const parseHeader = (raw: string | null): Effect.Effect<Readonly<Record<string, string>>, CommandError> => {
  if (raw === null || raw.trim().length === 0) return Effect.succeed({})
  const separator = raw.indexOf(":")
  const name = separator === -1 ? "" : raw.slice(0, separator).trim()
  const value = separator === -1 ? "" : raw.slice(separator + 1).trim()
  if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(name) || value.length === 0) {
    return Effect.fail(new CommandError({ detail: "The header must look like 'Name: value' (e.g. 'Authorization: Bearer …')." }))
  }
  return Effect.succeed({ [name]: value })
}

const describeConnection = (view: GuildMcpServerView): string => {
  if (!view.enabled) return "disabled"
  switch (view.connection._tag) {
    case "Connected":
      return `connected (${view.connection.transport}, ${view.connection.toolNames.length} tools)`
    case "Connecting":
      return "connecting"
    case "Quarantined":
      return `unreachable, retried after <t:${Math.ceil(view.connection.until / 1000)}:R>`
    case "Idle":
      return "not connected yet"
  }
}

/** One line per server for `/mcp list` (pure; header values are never part of a view). */
export const formatServerList = (views: ReadonlyArray<GuildMcpServerView>): string =>
  views.length === 0
    ? "No MCP servers are registered in this server. Add one with `/mcp add`."
    : views
      .map((view) =>
        `• **${view.name}** (${view.type}) ${view.url}: ${describeConnection(view)}${view.headerNames.length === 0 ? "" : ` · headers: ${view.headerNames.join(", ")}`}` +
        (view.headersUnusable === true ? " · its stored secrets (headers or URL) can no longer be read: remove it and add it again" : "")
      )
      .join("\n")

/** `/mcp add|remove|list|enable|disable` (Manage Server), through the MCP module's admin service. */
export const mcpCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireGuild(interaction)
    yield* requirePermission(interaction, PermissionFlagsBits.ManageGuild, "Manage Server")
    const admin = yield* GuildMcpAdmin
    const name = () => interaction.options.getString("name", true)
    const shown = <A>(effect: Effect.Effect<A, { readonly message: string }>) =>
      Effect.mapError(effect, (error) => new CommandError({ detail: error.message }))
    switch (interaction.options.getSubcommand()) {
      case "add": {
        const rawType = interaction.options.getString("type") ?? "generic"
        const type = SERVER_TYPES.find((candidate) => candidate === rawType)
        if (type === undefined) return yield* new CommandError({ detail: `Unknown server type '${rawType}'.` })
        const headers = yield* parseHeader(interaction.options.getString("header"))
        const added = yield* shown(admin.add({ guildId, name: name(), url: interaction.options.getString("url", true), type, headers, addedBy: interaction.user.id }))
        return `✅ Added MCP server **${added.name}** (${added.type}). Its tools are offered from the next message on.`
      }
      case "remove":
        yield* shown(admin.remove(guildId, name()))
        return `✅ Removed MCP server **${name()}**.`
      case "enable":
        yield* shown(admin.enable(guildId, name()))
        return `✅ Enabled MCP server **${name()}**.`
      case "disable":
        yield* shown(admin.disable(guildId, name()))
        return `✅ Disabled MCP server **${name()}**; its connection is closed.`
      default:
        return formatServerList(yield* shown(admin.list(guildId)))
    }
  })
