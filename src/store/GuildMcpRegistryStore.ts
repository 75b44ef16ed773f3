import * as SqlClient from "@effect/sql/SqlClient"
import { Effect, Layer, Schema } from "effect"
import {
  GuildMcpRegistry,
  GuildMcpRegistryError,
  type GuildMcpServerConfig,
  type GuildMcpServerType,
  MAX_GUILD_MCP_SERVERS
} from "../mcp/GuildMcpRegistry"
import { DbBigInt, DbFlag, flagValue } from "./columns"
import { withStoreTimeout } from "./StoreTimeout"

/**
 * Guild MCP registrations in the database (`/mcp add`), so every bot process sees the same
 * servers. Names are unique per guild ignoring case; at most `maxPerGuild` per guild.
 * Headers are stored as given (they may hold API keys: protect the database file).
 */

const SERVER_TYPES: ReadonlyArray<GuildMcpServerType> = ["generic", "url_fetcher", "web_search"]
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}$/
/** RFC 9110 token characters. */
const HEADER_NAME_PATTERN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const MAX_HEADERS = 20

const ServerRow = Schema.Struct({
  guild_id: Schema.String,
  name: Schema.String,
  url: Schema.String,
  server_type: Schema.Literal(...SERVER_TYPES),
  enabled: DbFlag,
  headers: Schema.parseJson(Schema.Record({ key: Schema.String, value: Schema.String })),
  added_by: Schema.String,
  added_at: DbBigInt
})

const toConfig = (row: typeof ServerRow.Type): GuildMcpServerConfig => ({
  guildId: row.guild_id,
  name: row.name,
  url: row.url,
  type: row.server_type,
  enabled: row.enabled,
  headers: row.headers,
  addedBy: row.added_by,
  addedAt: row.added_at
})

const invalid = (detail: string) => new GuildMcpRegistryError({ reason: "invalid", detail })

const storage = (operation: string) => (cause: unknown) =>
  new GuildMcpRegistryError({
    reason: "storage",
    detail: `Could not ${operation} the guild MCP registration: ${cause instanceof Error ? cause.message : String(cause)}`
  })

/** Why a registration is refused before it reaches the database, if it is. */
export const validateRegistration = (config: GuildMcpServerConfig): GuildMcpRegistryError | undefined => {
  if (config.guildId.trim() === "") return invalid("A guild MCP server needs a guild.")
  if (!NAME_PATTERN.test(config.name)) {
    return invalid(
      "MCP server names are 1-64 characters: letters, digits, spaces, '_', '-' or '.', starting with a letter or digit."
    )
  }
  if (!SERVER_TYPES.includes(config.type)) return invalid(`Unknown MCP server type "${String(config.type)}".`)
  let url: URL
  try {
    url = new URL(config.url)
  } catch {
    return invalid("The MCP server URL is not a valid URL.")
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return invalid("The MCP server URL must use http or https.")
  if (url.username !== "" || url.password !== "") {
    return invalid("Put credentials in headers, not in the MCP server URL.")
  }
  const headers = Object.entries(config.headers)
  if (headers.length > MAX_HEADERS) return invalid(`At most ${MAX_HEADERS} headers per MCP server.`)
  for (const [name, value] of headers) {
    if (!HEADER_NAME_PATTERN.test(name)) return invalid(`"${name}" is not a valid header name.`)
    if (/[\r\n\0]/.test(value)) return invalid(`The value of header "${name}" contains a line break.`)
  }
  return undefined
}

const nameKey = (name: string): string => name.toLowerCase()

const make = (maxPerGuild: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const selectServers = (guildId: string) =>
      sql`SELECT guild_id, name, url, server_type, enabled, headers, added_by, added_at
        FROM guild_mcp_servers WHERE guild_id = ${guildId} ORDER BY added_at, name_key`.pipe(
        Effect.flatMap(Schema.decodeUnknown(Schema.Array(ServerRow))),
        Effect.map((rows) => rows.map(toConfig))
      )

    // Serializes `add` per guild across processes on PostgreSQL (SQLite writers are serialized already).
    const lockGuild = (guildId: string) =>
      sql.onDialectOrElse({
        pg: () => sql`SELECT pg_advisory_xact_lock(hashtext(${`loopcord/guild_mcp/${guildId}`}))`,
        orElse: () => Effect.succeed([])
      })

    const list = Effect.fn("GuildMcpRegistry.list")(function* (guildId: string) {
      return yield* selectServers(guildId).pipe(Effect.mapError(storage("read")))
    })

    const add = Effect.fn("GuildMcpRegistry.add")(function* (config: GuildMcpServerConfig) {
      const refused = validateRegistration(config)
      if (refused !== undefined) return yield* refused
      yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* lockGuild(config.guildId)
            const existing = yield* selectServers(config.guildId)
            if (existing.some((server) => nameKey(server.name) === nameKey(config.name))) {
              return yield* new GuildMcpRegistryError({
                reason: "duplicate_name",
                detail: `An MCP server named "${config.name}" is already registered in this server.`
              })
            }
            if (existing.length >= maxPerGuild) {
              return yield* new GuildMcpRegistryError({
                reason: "limit_reached",
                detail: `This server already has the maximum of ${maxPerGuild} MCP servers. Remove one first.`
              })
            }
            yield* sql`INSERT INTO guild_mcp_servers
                (guild_id, name_key, name, url, server_type, enabled, headers, added_by, added_at)
              VALUES (${config.guildId}, ${nameKey(config.name)}, ${config.name}, ${config.url}, ${config.type},
                ${flagValue(config.enabled)}, ${JSON.stringify(config.headers)}, ${config.addedBy}, ${config.addedAt})`
          })
        )
        .pipe(
          Effect.catchIf(
            (error): error is Exclude<typeof error, GuildMcpRegistryError> => error._tag !== "GuildMcpRegistryError",
            (error) => Effect.fail(storage("save")(error))
          )
        )
    })

    const remove = Effect.fn("GuildMcpRegistry.remove")(function* (guildId: string, name: string) {
      const removed = yield* sql`DELETE FROM guild_mcp_servers
        WHERE guild_id = ${guildId} AND name_key = ${nameKey(name)} RETURNING name_key`.pipe(
        Effect.mapError(storage("remove"))
      )
      return removed.length > 0
    })

    const setEnabled = Effect.fn("GuildMcpRegistry.setEnabled")(function* (
      guildId: string,
      name: string,
      enabled: boolean
    ) {
      const updated = yield* sql`UPDATE guild_mcp_servers SET enabled = ${flagValue(enabled)}
        WHERE guild_id = ${guildId} AND name_key = ${nameKey(name)} RETURNING name_key`.pipe(
        Effect.mapError(storage("update"))
      )
      return updated.length > 0
    })

    return GuildMcpRegistry.of({ list, add, remove, setEnabled })
  })

/** The `GuildMcpRegistry` backed by the database (needs the migrated SqlClient of `Database.layer`). */
export const layer = (options: { readonly maxPerGuild?: number } = {}): Layer.Layer<GuildMcpRegistry, never, SqlClient.SqlClient> =>
  Layer.effect(
    GuildMcpRegistry,
    Effect.flatMap(make(Math.max(1, options.maxPerGuild ?? MAX_GUILD_MCP_SERVERS)), (methods) =>
      withStoreTimeout("GuildMcpRegistry", methods, (operation, detail) =>
        new GuildMcpRegistryError({ reason: "storage", detail: `Could not ${operation} the guild MCP registration: ${detail}` })))
  )
