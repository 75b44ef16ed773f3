/**
 * The Discord front's wiring (design §4), loaded by `appLayers.discordBotLayer` only when
 * DISCORD_TOKEN selects it: this module and its imports (discord.js, guild MCP and the MCP SDK)
 * never load in the terminal front.
 */
import { Layer } from "effect"
import { chatLayer, outboundNetwork, storesLive } from "./appLayers"
import { DiscordConfig } from "./config/DiscordConfig"
import { McpConfig } from "./config/McpConfig"
import type { ProviderKind } from "./config/ProviderConfig"
import { DiscordBot, DiscordServices } from "./discord/DiscordBot"
import { GuildMcpLive, GuildToolSourceLive } from "./mcp/McpLive"
import { DeliberateToolPlanner } from "./tools/deliberate/DeliberateToolPlanner"

/** Guild MCP: the pool with its breaker, the guild tool source's backing service, the admin. */
export const guildMcpLive = GuildMcpLive.pipe(Layer.provide(Layer.mergeAll(McpConfig.layer, outboundNetwork, storesLive)))

/** Guild MCP tools for the registry (per turn, after the exposure rules). */
const guildToolSourceLive = GuildToolSourceLive.pipe(Layer.provide(guildMcpLive))

/** The Discord bot: logs in, registers commands, answers until stopped. */
export const discordBotLayer = (kind: ProviderKind) => {
  const discord = Layer.merge(DiscordServices.pipe(Layer.provide(DiscordConfig.layer)), guildToolSourceLive)
  const chat = chatLayer(kind, discord)
  const planner = DeliberateToolPlanner.layer.pipe(
    Layer.provide(Layer.merge(chat, guildToolSourceLive))
  )
  return DiscordBot.layer.pipe(
    Layer.provide(Layer.mergeAll(chat, guildMcpLive, discord, DiscordConfig.layer, planner))
  )
}
