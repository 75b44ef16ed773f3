import { Context, Data, type Effect } from "effect"

/** What a guild MCP server is for; `url_fetcher` / `web_search` servers replace the bundled tool of their family. */
export type GuildMcpServerType = "generic" | "url_fetcher" | "web_search"

/** A guild MCP server as an admin registered it (`/mcp add`). */
export interface GuildMcpServerConfig {
  readonly guildId: string
  readonly name: string
  readonly url: string
  readonly type: GuildMcpServerType
  readonly enabled: boolean
  /** Extra request headers (e.g. an API key for the server); never logged. */
  readonly headers: Readonly<Record<string, string>>
  readonly addedBy: string
  readonly addedAt: number
  /**
   * The stored secrets (headers, or the URL's path and query) do not open (sealed under a key
   * this bot no longer has): the server is reported off, with no headers and only its origin,
   * until an admin adds it again.
   */
  readonly headersUnusable?: true
}

export class GuildMcpRegistryError extends Data.TaggedError("GuildMcpRegistryError")<{
  readonly reason: "limit_reached" | "duplicate_name" | "invalid" | "storage"
  readonly detail: string
}> {
  override get message(): string {
    return this.detail
  }
}

/** Default cap of registered MCP servers per guild. */
export const MAX_GUILD_MCP_SERVERS = 10

/**
 * Where guild MCP registrations live. The store module provides the database-backed one; an
 * in-memory one serves tests. Pure storage: connection state is the MCP pool's business.
 */
export class GuildMcpRegistry extends Context.Service<GuildMcpRegistry, {
  readonly list: (guildId: string) => Effect.Effect<ReadonlyArray<GuildMcpServerConfig>, GuildMcpRegistryError>
  readonly add: (config: GuildMcpServerConfig) => Effect.Effect<void, GuildMcpRegistryError>
  readonly remove: (guildId: string, name: string) => Effect.Effect<boolean, GuildMcpRegistryError>
  readonly setEnabled: (guildId: string, name: string, enabled: boolean) => Effect.Effect<boolean, GuildMcpRegistryError>
}>()("loopcord/mcp/GuildMcpRegistry") {}
