import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Context, Effect, Layer, Predicate } from "effect"
import { McpConfig } from "../config/McpConfig"
import { AddressPolicy } from "../fetch/AddressPolicy"
import { makeGuardedFetch } from "../fetch/guardedFetch"
import { SocketConnector } from "../fetch/SocketConnector"
import { GuildMcpAddressPolicy } from "./GuildMcpAddressPolicy"
import { parseJsonOrUndefined } from "../domain/parseJson"

/** The JSON-RPC method a POST carries (`undefined` for a GET, a batch or an unreadable body). */
const postedMethod = (init: RequestInit | undefined): string | undefined => {
  if (init?.method !== "POST" || typeof init.body !== "string") return undefined
  const message = parseJsonOrUndefined(init.body)
  return Predicate.isObject(message) && "method" in message && typeof message.method === "string" ? message.method : undefined
}

/**
 * How guild MCP traffic (and Smithery Connect) reaches the network. Global servers are
 * operator-configured and use plain fetch; guild servers are registered by guild admins, so
 * their traffic goes through the guarded fetch under the guild MCP address policy.
 */
export class GuildMcpHttp extends Context.Service<GuildMcpHttp, {
  /** A fetch bound to `target`'s origin: requests to any other origin are refused. */
  readonly fetchFor: (target: URL) => Effect.Effect<FetchLike>
}>()("loopcord/mcp/GuildMcpHttp") {
  /**
   * The guarded fetch: guild address policy on every request, DNS pinned, one origin, no
   * credentials in URLs, no redirects. Response caps: 8 MiB for tool results and event streams,
   * 2 MiB for every other POST (initialize, `tools/list` pages), because the SDK holds a whole
   * message in memory before anyone can look at it.
   */
  static readonly guarded: Layer.Layer<GuildMcpHttp, never, GuildMcpAddressPolicy | SocketConnector | McpConfig> = Layer.effect(
    GuildMcpHttp,
    Effect.gen(function* () {
      const policy = yield* GuildMcpAddressPolicy
      const connector = yield* SocketConnector
      const settings = yield* McpConfig
      const guarded = (target: URL, maxResponseBytes: number) =>
        makeGuardedFetch({ sameOrigin: target, maxResponseBytes }).pipe(
          Effect.provideService(AddressPolicy, policy),
          Effect.provideService(SocketConnector, connector)
        )
      return {
        fetchFor: (target: URL) =>
          Effect.gen(function* () {
            const streams = yield* guarded(target, settings.guildResponseCapBytes)
            const control = yield* guarded(target, settings.guildControlResponseCapBytes)
            const fetch: FetchLike = (url, init) => {
              const method = postedMethod(init)
              return method === undefined || method === "tools/call" ? streams(url, init) : control(url, init)
            }
            return fetch
          })
      }
    })
  )
}
