import { Layer } from "effect"
import type { McpConfig } from "../config/McpConfig"
import type { AddressPolicy } from "../fetch/AddressPolicy"
import type { SocketConnector } from "../fetch/SocketConnector"
import type { GuildMcpAddressPolicy } from "./GuildMcpAddressPolicy"
import { GuildMcpAdmin } from "./GuildMcpAdmin"
import { GuildMcpHttp } from "./GuildMcpHttp"
import { GuildMcpPool } from "./GuildMcpPool"
import type { GuildMcpRegistry } from "./GuildMcpRegistry"
import { GuildMcpTools } from "./GuildMcpTools"

export { GlobalMcpConnections, GlobalMcpServersLive } from "./GlobalMcpServers"

/**
 * The guild MCP services for the composition root: the pool (guarded fetch under the
 * GuildMcpAddressPolicy), the tool source backing service and the admin service. `AddressPolicy`
 * (fetch_url's) judges the URL arguments of url_fetcher / web_search servers. Registrations
 * come from the GuildMcpRegistry the store provides (or `InMemoryGuildMcpRegistry.layer`).
 *
 * ```ts
 * const guildPolicy = GuildMcpAddressPolicy.layer.pipe(Layer.provide(Layer.merge(McpConfig.layer, DnsResolver.system)))
 * const mcp = GuildMcpLive.pipe(Layer.provide(Layer.mergeAll(McpConfig.layer, AddressPolicy.layerSystem, guildPolicy, SocketConnector.system, registryLayer)))
 * const tools = ToolRegistry.layer.pipe(Layer.provide(GuildToolSourceLive), Layer.provideMerge(mcp))
 * const globals = GlobalMcpServersLive.pipe(Layer.provide(Layer.merge(tools, McpConfig.layer)))
 * ```
 */
export const GuildMcpLive: Layer.Layer<
  GuildMcpPool | GuildMcpTools | GuildMcpAdmin,
  never,
  McpConfig | AddressPolicy | GuildMcpAddressPolicy | SocketConnector | GuildMcpRegistry
> = Layer.mergeAll(GuildMcpTools.Default, GuildMcpAdmin.Default).pipe(
  Layer.provideMerge(GuildMcpPool.Default.pipe(Layer.provide(GuildMcpHttp.guarded)))
)

/** The GuildToolSource the ToolRegistry consumes (needs GuildMcpTools, i.e. GuildMcpLive). */
export const GuildToolSourceLive = GuildMcpTools.toolSource
