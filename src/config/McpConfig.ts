import { Config, Context, Duration, Effect, Layer, Option, type Redacted, Result, Schema, SchemaIssue } from "effect"
import { flagSetting, intSetting, millisSetting } from "./settings"
import { invalidSetting, mapOrFail } from "./settingError"

/** How a global MCP server is reached. */
const McpTransportName = Schema.Literals(["streamable-http", "sse", "stdio"]).annotate({
  message: 'transport must be "streamable-http", "sse" or "stdio"'
})

const ServerName = Schema.String.check(
  Schema.isPattern(/^[A-Za-z0-9_-]{1,64}$/, { message: "name must be 1-64 letters, digits, '_' or '-'" })
)

const HttpUrl = Schema.String.check(
  Schema.makeFilter((raw: string) => {
    const parsed = URL.canParse(raw) ? new URL(raw) : undefined
    return parsed !== undefined && (parsed.protocol === "http:" || parsed.protocol === "https:")
      ? true
      : `url must be an http(s) URL, got ${JSON.stringify(raw)}`
  })
)

const GlobalMcpServerEntry = Schema.Struct({
  name: ServerName,
  url: Schema.optional(HttpUrl),
  transport: McpTransportName.pipe(Schema.withDecodingDefaultKey(Effect.succeed("streamable-http" as const))),
  command: Schema.optional(Schema.Trimmed.check(Schema.isNonEmpty())),
  args: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
}).check(
  Schema.makeFilter((entry) => {
    if (entry.transport === "stdio") {
      return entry.command !== undefined || `server '${entry.name}': transport stdio needs a command`
    }
    return entry.url !== undefined || `server '${entry.name}': transport ${entry.transport} needs a url`
  })
)

/** One process-wide MCP server from `MCP_SERVERS`. */
export type GlobalMcpServerConfig = typeof GlobalMcpServerEntry.Type

const GlobalMcpServerList = Schema.Array(GlobalMcpServerEntry).check(
  Schema.makeFilter((servers) => {
    const seen = new Set<string>()
    for (const server of servers) {
      if (seen.has(server.name)) return `duplicate server name '${server.name}'`
      seen.add(server.name)
    }
    return true
  })
)

const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1()

const invalidServers = (issues: ReadonlyArray<string>) => `MCP_SERVERS is not a valid JSON array of servers (${issues.join("; ")})`

/** Decodes the `MCP_SERVERS` value; the error text names the variable (and, for bad JSON, what the parser said). */
const parseMcpServers = (raw: string): Result.Result<ReadonlyArray<GlobalMcpServerConfig>, string> => {
  if (raw.trim() === "") return Result.succeed([])
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch (error) {
    return Result.fail(invalidServers([error instanceof Error ? error.message : String(error)]))
  }
  return Schema.decodeUnknownResult(GlobalMcpServerList)(json).pipe(
    Result.mapError((error) =>
      invalidServers(
        formatIssues(error.issue).issues
          .slice(0, 3)
          .map((issue) => (issue.path === undefined || issue.path.length === 0
            ? issue.message
            : `at ${issue.path.map((key) => `[${String(key)}]`).join("")}: ${issue.message}`))
      )
    )
  )
}

/** Smithery Connect credentials; the key is sent to `baseUrl` only, never to an upstream server. */
export interface SmitherySettings {
  readonly apiKey: Redacted.Redacted<string>
  /** `https://api.smithery.ai` unless overridden (tests point it at a loopback fake). */
  readonly baseUrl: string
  /** A fixed namespace; when absent the first namespace of the account is used (one is created if none). */
  readonly namespace: Option.Option<string>
}

export interface McpSettings {
  readonly globalServers: ReadonlyArray<GlobalMcpServerConfig>
  /** Per transport attempt (connect and tool discovery). */
  readonly guildConnectTimeout: Duration.Duration
  /** Per guild MCP tool call. */
  readonly guildExecutionTimeout: Duration.Duration
  /** Quarantine of a server that failed to connect. */
  readonly guildFailureCooldown: Duration.Duration
  /** Idle time after which a pooled guild connection is closed. */
  readonly guildConnectionTtl: Duration.Duration
  /** How often idle connections and elapsed quarantines are swept. */
  readonly guildSweepInterval: Duration.Duration
  readonly maxGuildServers: number
  /** Response body cap of guild MCP HTTP traffic (tool results and event streams). */
  readonly guildResponseCapBytes: number
  /**
   * Response cap of every other guild MCP POST (initialize, tools/list pages): the SDK reads a
   * whole message into memory, and nothing but a tool result needs to be large.
   */
  readonly guildControlResponseCapBytes: number
  readonly smithery: Option.Option<SmitherySettings>
  /** Start-up waits this long for the global servers' first connect attempts (`MCP_STARTUP_WAIT_MS`). */
  readonly startupWait: Duration.Duration
  /** Guild servers may be on loopback, private or reserved addresses (`GUILD_MCP_ALLOW_PRIVATE_NETWORK`). */
  readonly guildAllowPrivateNetwork: boolean
  /** Tools kept per guild server (`GUILD_MCP_MAX_TOOLS`); the rest are skipped with a warning. */
  readonly guildMaxTools: number
  /** `tools/list` pages read per guild server. */
  readonly guildMaxToolPages: number
  /** Characters of a guild tool's description; longer ones are cut. */
  readonly guildDescriptionMaxChars: number
  /** Serialized bytes of a guild tool's input schema; a larger one skips the tool. */
  readonly guildSchemaMaxBytes: number
  /** Nesting depth of a guild tool's input schema; a deeper one skips the tool. */
  readonly guildSchemaMaxDepth: number
  /** Serialized bytes of all guild tool declarations of one turn. */
  readonly guildDeclarationsMaxBytes: number
  /** Characters of an MCP tool result (global and guild) replayed to the model (`MCP_RESULT_MAX_CHARS`). */
  readonly resultMaxChars: number
}

const SMITHERY_DEFAULT_BASE_URL = "https://api.smithery.ai"

const defaultMcpSettings: McpSettings = {
  globalServers: [],
  guildConnectTimeout: Duration.millis(15_000),
  guildExecutionTimeout: Duration.millis(30_000),
  guildFailureCooldown: Duration.millis(300_000),
  guildConnectionTtl: Duration.minutes(10),
  guildSweepInterval: Duration.seconds(60),
  maxGuildServers: 10,
  guildResponseCapBytes: 8 * 1024 * 1024,
  guildControlResponseCapBytes: 2 * 1024 * 1024,
  smithery: Option.none(),
  startupWait: Duration.millis(20_000),
  guildAllowPrivateNetwork: false,
  guildMaxTools: 64,
  guildMaxToolPages: 5,
  guildDescriptionMaxChars: 1024,
  guildSchemaMaxBytes: 16 * 1024,
  guildSchemaMaxDepth: 32,
  guildDeclarationsMaxBytes: 128 * 1024,
  resultMaxChars: 50_000
}

/**
 * Lenient parsing for the guild MCP knobs: `Number(env) || default` (unset, 0 or not a number
 * ⇒ default, no minimum). A negative value is treated as 0 rather than an invalid Duration.
 */
const lenientNumber = (name: string, fallback: number): Config.Config<number> =>
  Config.String(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => Math.max(Number(raw) || fallback, 0))
  )

const globalServersConfig: Config.Config<ReadonlyArray<GlobalMcpServerConfig>> = Config.String("MCP_SERVERS").pipe(
  Config.withDefault(""),
  mapOrFail((raw) => Result.mapError(parseMcpServers(raw), (message) => invalidSetting("MCP_SERVERS", message)))
)

const smitheryConfig: Config.Config<Option.Option<SmitherySettings>> = Config.all({
  apiKey: Config.option(Config.Redacted("SMITHERY_API_KEY")),
  baseUrl: Config.String("SMITHERY_API_BASE_URL").pipe(Config.withDefault(SMITHERY_DEFAULT_BASE_URL)),
  namespace: Config.option(Config.String("SMITHERY_NAMESPACE")).pipe(Config.map(Option.filter((text) => text.length > 0)))
}).pipe(
  mapOrFail(({ apiKey, baseUrl, namespace }) =>
    URL.canParse(baseUrl)
      ? Result.succeed(Option.map(apiKey, (key) => ({ apiKey: key, baseUrl: baseUrl.replace(/\/+$/, ""), namespace })))
      : Result.fail(invalidSetting("SMITHERY_API_BASE_URL", `SMITHERY_API_BASE_URL is not a URL: ${baseUrl}`))
  )
)

const fromEnv: Config.Config<McpSettings> = Config.all({
  globalServers: globalServersConfig,
  connectMs: lenientNumber("GUILD_MCP_CONNECT_TIMEOUT_MS", 15_000),
  executionMs: lenientNumber("GUILD_MCP_EXECUTION_TIMEOUT_MS", 30_000),
  cooldownMs: lenientNumber("GUILD_MCP_FAILURE_COOLDOWN_MS", 300_000),
  ttlMinutes: lenientNumber("GUILD_MCP_CONNECTION_TTL_MINUTES", 10),
  smithery: smitheryConfig,
  // Strict parsing: a bad value fails start-up naming the variable.
  startupWait: millisSetting("MCP_STARTUP_WAIT_MS", { default: 20_000, min: 0 }),
  guildAllowPrivateNetwork: flagSetting("GUILD_MCP_ALLOW_PRIVATE_NETWORK"),
  guildMaxTools: intSetting("GUILD_MCP_MAX_TOOLS", { default: 64, min: 1 }),
  resultMaxChars: intSetting("MCP_RESULT_MAX_CHARS", { default: 50_000, min: 500 })
}).pipe(
  Config.map(({ connectMs, cooldownMs, executionMs, globalServers, smithery, ttlMinutes, ...limits }) => ({
    ...defaultMcpSettings,
    ...limits,
    globalServers,
    guildConnectTimeout: Duration.millis(connectMs),
    guildExecutionTimeout: Duration.millis(executionMs),
    guildFailureCooldown: Duration.millis(cooldownMs),
    guildConnectionTtl: Duration.millis(ttlMinutes * 60_000),
    smithery
  }))
)

/** MCP settings: global servers, guild pool limits, Smithery Connect. */
export class McpConfig extends Context.Service<McpConfig, McpSettings>()("loopcord/config/McpConfig") {
  static readonly layer = Layer.effect(McpConfig, fromEnv)
  /** Defaults with overrides, for tests and embedding. */
  static readonly make = (overrides: Partial<McpSettings> = {}) => Layer.succeed(McpConfig, { ...defaultMcpSettings, ...overrides })
}
