import * as SqlClient from "effect/sql/SqlClient"
import { Duration, Effect, Result, Layer, Option, Redacted, Schema } from "effect"
import {
  GuildMcpRegistry,
  GuildMcpRegistryError,
  type GuildMcpServerConfig,
  type GuildMcpServerType,
  MAX_GUILD_MCP_SERVERS
} from "../mcp/GuildMcpRegistry"
import { DbBigInt, DbFlag, flagValue } from "./columns"
import { isSealed, SecretBox, type SecretBoxShape } from "./SecretBox"
import { disconnect, StoreTimeout, withStoreTimeout } from "./StoreTimeout"

/**
 * Guild MCP registrations in the database (`/mcp add`), so every bot process sees the same
 * servers. Names are unique per guild ignoring case; at most `maxPerGuild` per guild.
 *
 * Headers and the URL's path and query hold API keys (`/s/<secret>/mcp`, `?api_key=`): they
 * are sealed (SecretBox, LOOPCORD_SECRET_KEY, bound to their row) and never stored as plain
 * text; only the URL's origin is (`url`; the rest is `url_rest`). Without the key nothing secret
 * is stored: a registration with headers is refused, and so is a URL whose path is more than a
 * bare MCP endpoint (`/`, `/mcp`, `/sse`) or that has a query; a bare endpoint is kept plain, it
 * holds nothing. Plain-text headers and full URLs an older version stored are sealed when the
 * store starts with a key (and on their first read). Secrets that do not open leave the server
 * off (`headersUnusable`), never used.
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
  url_rest: Schema.String,
  server_type: Schema.Literals(SERVER_TYPES),
  enabled: DbFlag,
  name_key: Schema.String,
  headers: Schema.String,
  added_by: Schema.String,
  added_at: DbBigInt
})

const HeadersJson = Schema.fromJsonString(Schema.Record(Schema.String, Schema.String))
const decodeHeaders = Schema.decodeUnknownResult(HeadersJson)

/** The AAD of a registration's sealed headers and URL: they open only in their own row. */
const headersContext = (guildId: string, key: string): string => `guild_mcp_servers/${guildId}/${key}`

/** A URL's readable part (the origin) and the part that may carry a secret (path, query, fragment). */
const splitUrl = (url: string): { readonly origin: string; readonly rest: string } => {
  const parsed = new URL(url)
  const href = url.startsWith(parsed.origin) ? url : parsed.href
  return { origin: parsed.origin, rest: href.slice(parsed.origin.length) }
}

/** Paths that name an endpoint and hold nothing secret: kept plain when there is no key. */
const BARE_ENDPOINTS: ReadonlySet<string> = new Set(["", "/", "/mcp", "/mcp/", "/sse", "/sse/"])

const toConfig = (
  row: typeof ServerRow.Type,
  headers: Option.Option<Readonly<Record<string, string>>>,
  url: Option.Option<string>
): GuildMcpServerConfig => {
  const usable = Option.isSome(headers) && Option.isSome(url)
  return {
    guildId: row.guild_id,
    name: row.name,
    url: Option.getOrElse(url, () => row.url),
    type: row.server_type,
    enabled: row.enabled && usable,
    headers: Option.getOrElse(headers, () => ({})),
    addedBy: row.added_by,
    addedAt: row.added_at,
    ...(usable ? {} : { headersUnusable: true })
  }
}

/** `{}` (no headers) is stored as is; anything else is sealed. */
const NO_HEADERS = "{}"

/** The headers column for a registration, or the refusal when there is no key to seal them. */
const storedHeaders = (box: SecretBoxShape, guildId: string, key: string, headers: Readonly<Record<string, string>>) =>
  Object.keys(headers).length === 0
    ? Effect.succeed(NO_HEADERS)
    : box.seal(JSON.stringify(headers), headersContext(guildId, key)).pipe(
      Effect.tapError(() => Effect.logError("refused to store guild MCP headers: LOOPCORD_SECRET_KEY is not set")),
      Effect.mapError(() =>
        invalid(
          "This bot cannot store secret headers: its operator has not set LOOPCORD_SECRET_KEY. Add the server without a header, or ask the operator."
        )
      )
    )

/** The `url` and `url_rest` columns for a registration's URL, or the refusal when its secret part cannot be sealed. */
const storedUrl = (box: SecretBoxShape, guildId: string, key: string, url: string) => {
  const { origin, rest } = splitUrl(url)
  if (rest === "") return Effect.succeed({ origin, rest })
  if (!box.canSeal) {
    if (BARE_ENDPOINTS.has(rest)) return Effect.succeed({ origin, rest })
    return Effect.andThen(
      Effect.logError("refused to store a guild MCP URL with a path or query: LOOPCORD_SECRET_KEY is not set"),
      Effect.fail(invalid(
        "This bot cannot store a secret in an MCP server URL: its operator has not set LOOPCORD_SECRET_KEY. Use the server's plain endpoint (such as https://host/mcp), or ask the operator."
      ))
    )
  }
  return Effect.map(Effect.orDie(box.seal(rest, headersContext(guildId, key))), (sealed) => ({ origin, rest: sealed }))
}

const invalid = (detail: string) => new GuildMcpRegistryError({ reason: "invalid", detail })

const storage = (operation: string) => (cause: unknown) =>
  new GuildMcpRegistryError({
    reason: "storage",
    detail: `Could not ${operation} the guild MCP registration: ${cause instanceof Error ? cause.message : String(cause)}`
  })

/** Why a registration is refused before it reaches the database, if it is. */
const validateRegistration = (config: GuildMcpServerConfig): GuildMcpRegistryError | undefined => {
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
    const box = yield* SecretBox

    // Compare-and-set: a registration changed meanwhile keeps its new headers.
    const rewriteHeaders = (row: typeof ServerRow.Type, to: string) =>
      sql`UPDATE guild_mcp_servers SET headers = ${to}
        WHERE guild_id = ${row.guild_id} AND name_key = ${row.name_key} AND headers = ${row.headers}`.pipe(
        Effect.asVoid,
        Effect.catch((error) => Effect.logWarning(`could not re-seal guild MCP headers: ${error.message}`))
      )

    // Compare-and-set as for headers: the URL columns change only if nobody changed them meanwhile.
    const rewriteUrl = (row: typeof ServerRow.Type, to: { readonly origin: string; readonly rest: string }) =>
      sql`UPDATE guild_mcp_servers SET url = ${to.origin}, url_rest = ${to.rest}
        WHERE guild_id = ${row.guild_id} AND name_key = ${row.name_key} AND url = ${row.url} AND url_rest = ${row.url_rest}`.pipe(
        Effect.asVoid,
        Effect.catch((error) => Effect.logWarning(`could not seal a guild MCP URL: ${error.message}`))
      )

    /** A row's full URL: opened (re-sealed when stale, sealed when still plain), or none when it does not open. */
    const openUrl = (row: typeof ServerRow.Type) =>
      Effect.gen(function* () {
        const context = headersContext(row.guild_id, row.name_key)
        if (!isSealed(row.url_rest)) {
          const full = row.url + row.url_rest
          const { origin, rest } = splitUrl(full)
          // An older version's full URL, or a bare endpoint kept plain without a key: sealed once there is one.
          if (box.canSeal && rest !== "") yield* rewriteUrl(row, { origin, rest: yield* Effect.orDie(box.seal(rest, context)) })
          return Option.some(full)
        }
        const opened = yield* Effect.result(box.open(row.url_rest, context))
        if (Result.isFailure(opened)) {
          yield* Effect.logWarning(`guild MCP server "${row.name}" has a URL that does not open (${opened.failure.message}); it stays off until re-added`).pipe(
            Effect.annotateLogs({ guildId: row.guild_id })
          )
          return Option.none()
        }
        if (Option.isSome(opened.success.resealed)) yield* rewriteUrl(row, { origin: row.url, rest: opened.success.resealed.value })
        return Option.some(row.url + Redacted.value(opened.success.plain))
      })

    /** A row's headers: opened (re-sealed when stale, sealed when still plain), or none when they do not open. */
    const openHeaders = (row: typeof ServerRow.Type) =>
      Effect.gen(function* () {
        const context = headersContext(row.guild_id, row.name_key)
        if (!isSealed(row.headers)) {
          const plain = decodeHeaders(row.headers)
          if (Result.isFailure(plain)) {
            yield* Effect.logWarning(`guild MCP server "${row.name}" has headers that are not readable; it stays off`)
            return Option.none()
          }
          if (box.canSeal && Object.keys(plain.success).length > 0) {
            yield* rewriteHeaders(row, yield* Effect.orDie(box.seal(row.headers, context)))
          }
          return Option.some(plain.success)
        }
        const opened = yield* Effect.result(box.open(row.headers, context))
        if (Result.isFailure(opened)) {
          yield* Effect.logWarning(`guild MCP server "${row.name}" has headers that do not open (${opened.failure.message}); it stays off until re-added`).pipe(
            Effect.annotateLogs({ guildId: row.guild_id })
          )
          return Option.none()
        }
        if (Option.isSome(opened.success.resealed)) yield* rewriteHeaders(row, opened.success.resealed.value)
        const decoded = decodeHeaders(Redacted.value(opened.success.plain))
        return Result.isSuccess(decoded) ? Option.some(decoded.success) : Option.none()
      })

    const selectServers = (guildId: string) =>
      sql`SELECT guild_id, name_key, name, url, url_rest, server_type, enabled, headers, added_by, added_at
        FROM guild_mcp_servers WHERE guild_id = ${guildId} ORDER BY added_at, name_key`.pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(ServerRow))),
        Effect.flatMap((rows) =>
          Effect.forEach(rows, (row) => Effect.map(Effect.zip(openHeaders(row), openUrl(row)), ([headers, url]) => toConfig(row, headers, url)))
        )
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
      const headers = yield* storedHeaders(box, config.guildId, nameKey(config.name), config.headers)
      const url = yield* storedUrl(box, config.guildId, nameKey(config.name), config.url)
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
                (guild_id, name_key, name, url, url_rest, server_type, enabled, headers, added_by, added_at)
              VALUES (${config.guildId}, ${nameKey(config.name)}, ${config.name}, ${url.origin}, ${url.rest}, ${config.type},
                ${flagValue(config.enabled)}, ${headers}, ${config.addedBy}, ${config.addedAt})`
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

/** Seals the plain-text headers an older version stored, or says how many stay plain (no key). */
const sealPlainHeaders = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const PlainRow = Schema.Struct({ guild_id: Schema.String, name_key: Schema.String, headers: Schema.String })
  const rows = yield* sql`SELECT guild_id, name_key, headers FROM guild_mcp_servers WHERE headers <> ${NO_HEADERS}`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(PlainRow)))
  )
  const plain = rows.filter((row) => !isSealed(row.headers))
  if (plain.length === 0) return 0
  if (!box.canSeal) {
    yield* Effect.logWarning(`${plain.length} guild MCP server(s) keep plain-text headers in the database: set LOOPCORD_SECRET_KEY to seal them`)
    return 0
  }
  for (const row of plain) {
    const sealed = yield* Effect.orDie(box.seal(row.headers, headersContext(row.guild_id, row.name_key)))
    yield* sql`UPDATE guild_mcp_servers SET headers = ${sealed}
      WHERE guild_id = ${row.guild_id} AND name_key = ${row.name_key} AND headers = ${row.headers}`
  }
  yield* Effect.logInfo(`sealed the plain-text headers of ${plain.length} guild MCP server(s) under LOOPCORD_SECRET_KEY`)
  return plain.length
})

/**
 * Moves the path and query out of the URLs an older version stored whole: the origin stays in
 * `url`, the rest is sealed into `url_rest` (without a key, only a bare endpoint is moved, and
 * the operator is told how many URLs stay plain).
 */
const sealPlainUrls = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const box = yield* SecretBox
  const UrlRow = Schema.Struct({ guild_id: Schema.String, name_key: Schema.String, url: Schema.String, url_rest: Schema.String })
  const rows = yield* sql`SELECT guild_id, name_key, url, url_rest FROM guild_mcp_servers`.pipe(
    Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(UrlRow)))
  )
  let sealed = 0
  let keptPlain = 0
  for (const row of rows) {
    if (isSealed(row.url_rest) || !URL.canParse(row.url + row.url_rest)) continue
    const { origin, rest } = splitUrl(row.url + row.url_rest)
    if (rest === "" && row.url_rest === "") continue
    let to: string
    if (box.canSeal && rest !== "") {
      to = yield* Effect.orDie(box.seal(rest, headersContext(row.guild_id, row.name_key)))
      sealed += 1
    } else if (BARE_ENDPOINTS.has(rest)) {
      if (row.url === origin && row.url_rest === rest) continue
      to = rest
    } else {
      keptPlain += 1
      continue
    }
    yield* sql`UPDATE guild_mcp_servers SET url = ${origin}, url_rest = ${to}
      WHERE guild_id = ${row.guild_id} AND name_key = ${row.name_key} AND url = ${row.url} AND url_rest = ${row.url_rest}`
  }
  if (keptPlain > 0) {
    yield* Effect.logWarning(`${keptPlain} guild MCP server URL(s) keep their path or query in plain text in the database: set LOOPCORD_SECRET_KEY to seal them`)
  }
  if (sealed > 0) yield* Effect.logInfo(`sealed the path and query of ${sealed} guild MCP server URL(s) under LOOPCORD_SECRET_KEY`)
  return sealed
})

/**
 * Start-up: the plain-text secrets an older version stored are sealed (once the operator set
 * LOOPCORD_SECRET_KEY). On SQLite the write-ahead log, which still holds the rows as they
 * were, is then checkpointed and truncated, so no copy of a secret stays in the database's files. Bounded by STORE_TIMEOUT_MS; a failure is logged, never fatal (a row it
 * missed is sealed on its first read).
 */
const sealPlainSecrets = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const andCheckpoint = <E, R>(effect: Effect.Effect<number, E, R>) =>
    sql.onDialectOrElse({
      sqlite: () =>
        Effect.gen(function* () {
          const changed = yield* effect
          if (changed > 0) yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
          return changed
        }),
      orElse: () => effect
    })
  yield* andCheckpoint(Effect.map(Effect.zip(sealPlainHeaders, sealPlainUrls), ([headers, urls]) => headers + urls))
}).pipe(
  disconnect,
  (sealing) => Effect.flatMap(StoreTimeout, (timeout) => Effect.timeoutOrElse(sealing, { duration: timeout, orElse: () => Effect.fail(new Error(`no answer within ${Duration.toMillis(timeout)} ms (STORE_TIMEOUT_MS)`)) })),
  Effect.catch((error) => Effect.logWarning(`could not seal plain-text guild MCP secrets: ${error instanceof Error ? error.message : String(error)}`))
)

/** The `GuildMcpRegistry` backed by the database (needs the migrated SqlClient of `Database.layer`). */
export const layer = (
  options: { readonly maxPerGuild?: number } = {}
): Layer.Layer<GuildMcpRegistry, never, SqlClient.SqlClient | SecretBox> =>
  Layer.effect(
    GuildMcpRegistry,
    Effect.flatMap(make(Math.max(1, options.maxPerGuild ?? MAX_GUILD_MCP_SERVERS)), (methods) =>
      withStoreTimeout("GuildMcpRegistry", methods, (operation, detail) =>
        new GuildMcpRegistryError({ reason: "storage", detail: `Could not ${operation} the guild MCP registration: ${detail}` })))
  )

/** Start-up step of `Stores.layerConfig`: the plain-text headers and URLs already in the database are sealed. */
export const sealPlainSecretsLayer: Layer.Layer<never, never, SqlClient.SqlClient | SecretBox> = Layer.effectDiscard(sealPlainSecrets)
