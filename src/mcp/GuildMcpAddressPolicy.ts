import { Context, Effect, Layer } from "effect"
import { McpConfig } from "../config/McpConfig"
import { type AddressPolicyShape, makeAddressPolicy } from "../fetch/AddressPolicy"
import type { DnsResolver } from "../fetch/DnsResolver"

export const GUILD_MCP_PRIVATE_NETWORK_OPT_IN = "GUILD_MCP_ALLOW_PRIVATE_NETWORK=true"

/**
 * The address policy of guild MCP servers (docs/architecture.md, Guild MCP servers): anyone with
 * Manage Server can register one, so loopback, private, link-local, reserved and metadata addresses
 * are refused in every environment unless `GUILD_MCP_ALLOW_PRIVATE_NETWORK=true` (the metadata
 * floor is never lifted). `RUN_ENV` and `FETCH_URL_ALLOW_PRIVATE_NETWORK` do not affect it.
 */
export class GuildMcpAddressPolicy extends Context.Service<
  GuildMcpAddressPolicy,
  AddressPolicyShape
>()("loopcord/mcp/GuildMcpAddressPolicy") {
  /** From McpConfig (`GUILD_MCP_ALLOW_PRIVATE_NETWORK`); needs a DnsResolver. */
  static readonly layer: Layer.Layer<GuildMcpAddressPolicy, never, McpConfig | DnsResolver> = Layer.effect(
    GuildMcpAddressPolicy,
    Effect.flatMap(McpConfig, (settings) =>
      makeAddressPolicy({ allowPrivateNetwork: settings.guildAllowPrivateNetwork, optIn: GUILD_MCP_PRIVATE_NETWORK_OPT_IN })
    )
  )
  /** An explicit policy, for tests and embedding; needs a DnsResolver. */
  static readonly make = (options: { readonly allowPrivateNetwork: boolean }): Layer.Layer<GuildMcpAddressPolicy, never, DnsResolver> =>
    Layer.effect(
      GuildMcpAddressPolicy,
      makeAddressPolicy({ allowPrivateNetwork: options.allowPrivateNetwork, optIn: GUILD_MCP_PRIVATE_NETWORK_OPT_IN })
    )
}
