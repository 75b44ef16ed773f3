import { Clock, Data, Effect } from "effect"
import { McpConfig } from "../config/McpConfig"
import { AddressPolicy } from "../fetch/AddressPolicy"
import { type ConnectionStatus, GuildMcpPool } from "./GuildMcpPool"
import {
  type GuildMcpRegistryError,
  type GuildMcpServerConfig,
  type GuildMcpServerType,
  GuildMcpRegistry
} from "./GuildMcpRegistry"

/** Why an admin command was refused; `message` is written for the admin. */
export class GuildMcpAdminError extends Data.TaggedError("GuildMcpAdminError")<{
  readonly reason: "invalid_name" | "invalid_url" | "limit_reached" | "duplicate_name" | "not_found" | "storage"
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

/** Origin and path only: a query may carry a key (`?api_key=`), and /mcp list is visible to admins in chat. */
const displayUrl = (raw: string): string => {
  if (!URL.canParse(raw)) return raw
  const url = new URL(raw)
  return `${url.origin}${url.pathname}${url.search === "" ? "" : "?…"}`
}

const fromRegistry = (error: GuildMcpRegistryError): GuildMcpAdminError =>
  new GuildMcpAdminError({ reason: error.reason === "invalid" ? "invalid_url" : error.reason, detail: error.detail })

const notFound = (name: string) =>
  new GuildMcpAdminError({ reason: "not_found", detail: `No MCP server named '${name}' is registered in this server` })

/**
 * What the Discord `/mcp add|remove|list|enable|disable` commands call. Writes go through the
 * GuildMcpRegistry; remove and disable also drop the pooled connection and the quarantine.
 */
export class GuildMcpAdmin extends Effect.Service<GuildMcpAdmin>()("loopcord/mcp/GuildMcpAdmin", {
  effect: Effect.gen(function* () {
    const registry = yield* GuildMcpRegistry
    const pool = yield* GuildMcpPool
    const policy = yield* AddressPolicy
    const settings = yield* McpConfig

    const add = Effect.fn("GuildMcpAdmin.add")(function* (request: AddGuildMcpServer) {
      const name = request.name.trim()
      if (!NAME_PATTERN.test(name)) {
        return yield* new GuildMcpAdminError({
          reason: "invalid_name",
          detail: "A server name must be 1-32 letters, digits, '_' or '-'"
        })
      }
      const target = yield* policy.validate(request.url).pipe(
        Effect.mapError((error) => new GuildMcpAdminError({ reason: "invalid_url", detail: error.message }))
      )
      const existing = yield* registry.list(request.guildId).pipe(Effect.mapError(fromRegistry))
      if (existing.some((config) => config.name === name)) {
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
      const removed = yield* registry.remove(guildId, name).pipe(Effect.mapError(fromRegistry))
      yield* pool.disconnect(guildId, name)
      if (!removed) return yield* notFound(name)
    })

    const setEnabled = (guildId: string, name: string, enabled: boolean) =>
      Effect.gen(function* () {
        const found = yield* registry.setEnabled(guildId, name, enabled).pipe(Effect.mapError(fromRegistry))
        if (!enabled) yield* pool.disconnect(guildId, name)
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
}) {}
