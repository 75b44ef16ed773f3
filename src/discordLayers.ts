/**
 * The Discord front's wiring, loaded by `appLayers.discordBotLayer` only when DISCORD_TOKEN selects
 * it: this module and its imports (discord.js, guild MCP and the MCP SDK, the credential routes)
 * never load in the terminal front.
 */
import { Layer } from "effect"
import { chatLayer, databaseLive, outboundNetwork, storesLive } from "./appLayers"
import { CredentialConfig } from "./config/CredentialConfig"
import { DiscordConfig } from "./config/DiscordConfig"
import { McpConfig } from "./config/McpConfig"
import { ServerSettingsConfig } from "./config/ServerSettingsConfig"
import type { ProviderKind } from "./config/ProviderConfig"
import { DiscordBot, DiscordServices } from "./discord/DiscordBot"
import type { DiscordClient } from "./discord/DiscordClient"
import { DiscordCredentialRoutes } from "./discord/DiscordCredentials"
import { DiscordToolApprovals } from "./discord/DiscordToolApprovals"
import { secretKeyNotice } from "./discord/secretKeyNotice"
import { DnsResolver } from "./fetch/DnsResolver"
import { GuildMcpAddressPolicy } from "./mcp/GuildMcpAddressPolicy"
import { GlobalMcpConnections, GuildMcpLive, GuildToolSourceLive } from "./mcp/McpLive"
import { markStarted } from "./ops/botReadiness"
import { discordOpsFoundation, discordOpsLayer } from "./ops/DiscordOps"
import { ServerTurnAdmissionStore } from "./store/ServerTurnAdmissionStore"
import { UsageLedgerStore } from "./store/UsageLedgerStore"
import { DeliberateToolPlanner } from "./tools/deliberate/DeliberateToolPlanner"

/** Guild MCP's own URL policy (docs/architecture.md, Guild MCP servers): GUILD_MCP_ALLOW_PRIVATE_NETWORK only. */
const guildMcpAddressPolicy = GuildMcpAddressPolicy.layer.pipe(Layer.provide(Layer.merge(McpConfig.layer, DnsResolver.system)))

/** Guild MCP: the pool with its breaker, the guild tool source's backing service, the admin. */
const guildMcpLive = GuildMcpLive.pipe(
  Layer.provide(Layer.mergeAll(McpConfig.layer, outboundNetwork, guildMcpAddressPolicy, storesLive))
)

/** Guild MCP tools for the registry (per turn, after the exposure rules). */
const guildToolSourceLive = GuildToolSourceLive.pipe(Layer.provide(guildMcpLive))

/**
 * Who pays for a Discord turn (docs/architecture.md, Who pays for a turn): personal and server keys
 * from the stores (problems told by DM), admission of server-paid turns, the usage ledger. The
 * terminal keeps the operator's pool.
 */
const discordCredentialsLive = <E, R>(discord: Layer.Layer<DiscordClient, E, R>) =>
  Layer.mergeAll(
    DiscordCredentialRoutes,
    ServerTurnAdmissionStore.admissionLayer,
    UsageLedgerStore.ledgerLayer
  ).pipe(Layer.provide(Layer.mergeAll(storesLive, CredentialConfig.layer, discord)))

/**
 * The Discord bot (DISCORD_TOKEN set): logs in, registers commands, answers until stopped. Its
 * operations (src/ops/DiscordOps): the health server starts first; readiness checks and the
 * graceful drain (SIGTERM lets running replies finish) sit beside the bot.
 */
export const discordBotLayer = (kind: ProviderKind) => {
  // The bot logs in once the global MCP servers had their start-up wait (MCP_STARTUP_WAIT_MS): the
  // first message is answered with their tools, and none arrives while nobody listens yet.
  const discord = DiscordServices.pipe(Layer.provide(Layer.merge(DiscordConfig.layer, GlobalMcpConnections.layer.pipe(Layer.provide(McpConfig.layer)))))
  // Tool approvals ask in the turn's channel (the server's /approvals rules say which calls wait).
  const approvals = DiscordToolApprovals.pipe(Layer.provide(Layer.mergeAll(discord, storesLive, ServerSettingsConfig.layer)))
  const chat = chatLayer(kind, Layer.mergeAll(discord, guildToolSourceLive, discordCredentialsLive(discord), approvals))
  const planner = DeliberateToolPlanner.layer.pipe(
    Layer.provide(Layer.merge(chat, guildToolSourceLive))
  )
  return DiscordBot.layer.pipe(
    Layer.merge(discordOpsLayer),
    Layer.merge(secretKeyNotice.pipe(Layer.provide(CredentialConfig.layer))),
    Layer.provide(Layer.mergeAll(chat, guildMcpLive, discord, DiscordConfig.layer, CredentialConfig.layer, planner, databaseLive)),
    Layer.tap(() => markStarted),
    Layer.provide(discordOpsFoundation)
  )
}
