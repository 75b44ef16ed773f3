import { Layer } from "effect"
import type { McpConfig } from "../config/McpConfig"
import type { AddressPolicy } from "../fetch/AddressPolicy"
import type { SocketConnector } from "../fetch/SocketConnector"
import { GuildMcpAdmin } from "./GuildMcpAdmin"
import { GuildMcpHttp } from "./GuildMcpHttp"
import { GuildMcpPool } from "./GuildMcpPool"
import type { GuildMcpRegistry } from "./GuildMcpRegistry"
import { GuildMcpTools } from "./GuildMcpTools"

export { GlobalMcpServersLive } from "./GlobalMcpServers"

/**
 * The guild MCP services for the composition root: the pool (guarded fetch), the tool source
 * backing service and the admin service. Registrations come from the GuildMcpRegistry the
 * store provides (or `InMemoryGuildMcpRegistry.layer`).
 *
 * ```ts
 * const mcp = GuildMcpLive.pipe(Layer.provide(Layer.mergeAll(McpConfig.layer, AddressPolicy.layerSystem, SocketConnector.system, registryLayer)))
 * const tools = ToolRegistry.layer.pipe(Layer.provide(GuildToolSourceLive), Layer.provideMerge(mcp))
 * const globals = GlobalMcpServersLive.pipe(Layer.provide(Layer.merge(tools, McpConfig.layer)))
 * ```
 */
export const GuildMcpLive: Layer.Layer<
  GuildMcpPool | GuildMcpTools | GuildMcpAdmin,
  never,
  McpConfig | AddressPolicy | SocketConnector | GuildMcpRegistry
> = Layer.mergeAll(GuildMcpTools.Default, GuildMcpAdmin.Default).pipe(
  Layer.provideMerge(GuildMcpPool.Default.pipe(Layer.provide(GuildMcpHttp.guarded)))
)

/** The GuildToolSource the ToolRegistry consumes (needs GuildMcpTools, i.e. GuildMcpLive). */
export const GuildToolSourceLive = GuildMcpTools.toolSource
