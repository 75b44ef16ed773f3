import { Clock, Context, Data, Effect, Layer } from "effect"
import { McpConfig } from "../config/McpConfig"
import type { UrlPolicyError } from "../fetch/UrlPolicyError"
import { GUILD_MCP_PRIVATE_NETWORK_OPT_IN, GuildMcpAddressPolicy } from "./GuildMcpAddressPolicy"
import { type ConnectionStatus, GuildMcpPool, sameServerName } from "./GuildMcpPool"
import {
  type GuildMcpRegistryError,
  type GuildMcpServerConfig,
  type GuildMcpServerType,
  GuildMcpRegistry
} from "./GuildMcpRegistry"

/** Why an admin command was refused; `message` is written for the admin. */
class GuildMcpAdminError extends Data.TaggedError("GuildMcpAdminError")<{
  readonly reason: "invalid_name" | "invalid_url" | "private_address" | "limit_reached" | "duplicate_name" | "not_found" | "storage"
  readonly detail: string
}> {
  override get message(): string {
    return this.detail
  }
}

export interface AddGuildMcpServer {
  readonly guildId: string
  readonly name: string
  readonly url: string
  readonly type: GuildMcpServerType
  /** Extra request headers (e.g. the server's API key); stored, never shown or logged. */
  readonly headers?: Readonly<Record<string, string>>
  readonly addedBy: string
}

/** A registration as `/mcp list` shows it: header values are never included. */
export interface GuildMcpServerView {
  readonly name: string
  readonly url: string
  readonly type: GuildMcpServerType
  readonly enabled: boolean
  readonly headerNames: ReadonlyArray<string>
  /** The stored headers do not open (the bot's secret key changed): the server stays off until re-added. */
  readonly headersUnusable?: true
  readonly addedBy: string
  readonly addedAt: number
  readonly connection: ConnectionStatus
}

/** Server names double as pool keys and appear in tool sources: keep them short and plain. */
const NAME_PATTERN = /^[A-Za-z0-9_-]{1,32}$/

/** The origin only: some services put the key in the path or the query, and /mcp list is shown in chat. */
const displayUrl = (raw: string): string => (URL.canParse(raw) ? new URL(raw).origin : "(not a URL)")

/**
 * What the admin reads when `/mcp add` refuses a URL. A host name's resolved address is not
 * echoed (only its class), so the command cannot map the internal network.
 */
const describeRefusal = (error: UrlPolicyError): GuildMcpAdminError => {
  if (error.code !== "PRIVATE_NETWORK_BLOCKED") {
    return new GuildMcpAdminError({
      reason: "invalid_url",
      detail: error.code === "DNS_RESOLUTION_FAILED" ? `Could not resolve ${error.host}; check the MCP server URL.` : error.message
    })
  }
  const literal = error.address === error.host
  const what = literal ? `${error.host} is a ${error.reason} address` : `${error.host} resolves to a ${error.reason} address`
  return new GuildMcpAdminError({
    reason: "private_address",
    detail: error.alwaysBlocked === true
      ? `Refused: ${what}. Guild MCP servers may never use such an address.`
      : `Refused: ${what}. Guild MCP servers must be on the public internet (the bot's operator can allow private networks with ${GUILD_MCP_PRIVATE_NETWORK_OPT_IN}).`
  })
}

const fromRegistry = (error: GuildMcpRegistryError): GuildMcpAdminError =>
  new GuildMcpAdminError({ reason: error.reason === "invalid" ? "invalid_url" : error.reason, detail: error.detail })

const notFound = (name: string) =>
  new GuildMcpAdminError({ reason: "not_found", detail: `No MCP server named '${name}' is registered in this server` })

const makeGuildMcpAdmin = Effect.gen(function* () {
  const registry = yield* GuildMcpRegistry
  const pool = yield* GuildMcpPool
  const policy = yield* GuildMcpAddressPolicy
  const settings = yield* McpConfig

  /** The registered spelling of `name` (names match ignoring case everywhere). */
  const registeredName = (guildId: string, name: string) =>
    registry.list(guildId).pipe(
      Effect.mapError(fromRegistry),
      Effect.map((configs) => configs.find((config) => sameServerName(config.name, name.trim()))?.name)
    )

  const add = Effect.fn("GuildMcpAdmin.add")(function* (request: AddGuildMcpServer) {
    const name = request.name.trim()
    if (!NAME_PATTERN.test(name)) {
      return yield* new GuildMcpAdminError({
        reason: "invalid_name",
        detail: "A server name must be 1-32 letters, digits, '_' or '-'"
      })
    }
    // Resolved and judged before anything is stored or dialed (the guild MCP address policy).
    const target = yield* policy.validate(request.url).pipe(
      Effect.tapError((error) => Effect.logWarning(`/mcp add refused a URL: ${error.message}`)),
      Effect.mapError(describeRefusal)
    )
    const existing = yield* registry.list(request.guildId).pipe(Effect.mapError(fromRegistry))
    if (existing.some((config) => sameServerName(config.name, name))) {
      return yield* new GuildMcpAdminError({ reason: "duplicate_name", detail: `An MCP server named '${name}' already exists in this server` })
    }
    if (existing.length >= settings.maxGuildServers) {
      return yield* new GuildMcpAdminError({
        reason: "limit_reached",
        detail: `This server already has ${settings.maxGuildServers} MCP servers (the maximum); remove one first`
      })
    }
    const config: GuildMcpServerConfig = {
      guildId: request.guildId,
      name,
      url: target.url.href,
      type: request.type,
      enabled: true,
      headers: { ...request.headers },
      addedBy: request.addedBy,
      addedAt: yield* Clock.currentTimeMillis
    }
    yield* registry.add(config).pipe(Effect.mapError(fromRegistry))
    // A server re-added under the same name starts with a clean slate.
    yield* pool.disconnect(config.guildId, config.name)
    return config
  })

  const remove = Effect.fn("GuildMcpAdmin.remove")(function* (guildId: string, name: string) {
    const registered = (yield* registeredName(guildId, name)) ?? name.trim()
    const removed = yield* registry.remove(guildId, registered).pipe(Effect.mapError(fromRegistry))
    yield* pool.disconnect(guildId, registered)
    if (!removed) return yield* notFound(name)
  })

  const setEnabled = (guildId: string, name: string, enabled: boolean) =>
    Effect.gen(function* () {
      const registered = (yield* registeredName(guildId, name)) ?? name.trim()
      const found = yield* registry.setEnabled(guildId, registered, enabled).pipe(Effect.mapError(fromRegistry))
      if (!enabled) yield* pool.disconnect(guildId, registered)
      if (!found) return yield* notFound(name)
    })

  const enable = Effect.fn("GuildMcpAdmin.enable")(function* (guildId: string, name: string) {
    yield* setEnabled(guildId, name, true)
  })

  const disable = Effect.fn("GuildMcpAdmin.disable")(function* (guildId: string, name: string) {
    yield* setEnabled(guildId, name, false)
  })

  const list = Effect.fn("GuildMcpAdmin.list")(function* (guildId: string) {
    const configs = yield* registry.list(guildId).pipe(Effect.mapError(fromRegistry))
    return yield* Effect.forEach(configs, (config) =>
      Effect.map(
        pool.status(config.guildId, config.name),
        (connection): GuildMcpServerView => ({
          name: config.name,
          url: displayUrl(config.url),
          type: config.type,
          enabled: config.enabled,
          headerNames: Object.keys(config.headers),
          ...(config.headersUnusable === true ? { headersUnusable: true } : {}),
          addedBy: config.addedBy,
          addedAt: config.addedAt,
          connection
        })
      )
    )
  })

  return { add, remove, enable, disable, list } as const
})

/**
 * What the Discord `/mcp add|remove|list|enable|disable` commands call. Writes go through the
 * GuildMcpRegistry; remove and disable also drop the pooled connection and the quarantine.
 */
export class GuildMcpAdmin extends Context.Service<GuildMcpAdmin, Effect.Success<typeof makeGuildMcpAdmin>>()("loopcord/mcp/GuildMcpAdmin") {
  /** Needs the registry, the pool, the guild address policy and McpConfig. */
  static readonly Default: Layer.Layer<GuildMcpAdmin, never, GuildMcpRegistry | GuildMcpPool | GuildMcpAddressPolicy | McpConfig> = Layer.effect(GuildMcpAdmin, makeGuildMcpAdmin)
}
