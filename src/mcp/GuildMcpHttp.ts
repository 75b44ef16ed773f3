import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Context, Effect, Layer } from "effect"
import { McpConfig } from "../config/McpConfig"
import { AddressPolicy } from "../fetch/AddressPolicy"
import { makeGuardedFetch } from "../fetch/guardedFetch"
import { SocketConnector } from "../fetch/SocketConnector"

/**
 * How guild MCP traffic (and Smithery Connect) reaches the network. Global servers are
 * operator-configured and use plain fetch; guild servers are registered by guild admins, so
 * their traffic goes through the guarded fetch.
 */
export class GuildMcpHttp extends Context.Tag("loopcord/mcp/GuildMcpHttp")<GuildMcpHttp, {
  /** A fetch bound to `target`'s origin: requests to any other origin are refused. */
  readonly fetchFor: (target: URL) => Effect.Effect<FetchLike>
}>() {
  /**
   * The guarded fetch (spec §6.6): address policy on every request, DNS pinned, one origin, no
   * credentials in URLs, no redirects, response cap (8 MiB).
   */
  static readonly guarded: Layer.Layer<GuildMcpHttp, never, AddressPolicy | SocketConnector | McpConfig> = Layer.effect(
    GuildMcpHttp,
    Effect.gen(function* () {
      const context = yield* Effect.context<AddressPolicy | SocketConnector>()
      const settings = yield* McpConfig
      return {
        fetchFor: (target: URL) =>
          makeGuardedFetch({ sameOrigin: target, maxResponseBytes: settings.guildResponseCapBytes }).pipe(
            Effect.provide(context)
          )
      }
    })
  )
}
