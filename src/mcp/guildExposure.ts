import type { GuildMcpServerConfig, GuildMcpServerType } from "./GuildMcpRegistry"
import type { McpToolInfo } from "./McpSession"

/**
 * Which guild MCP tools a turn sees (docs/architecture.md, Tool availability and assembly). Pure:
 * the tool source feeds it the enabled registrations and what each connected server announced; the
 * registry then drops names that collide with a built-in or global tool.
 */

/** Built-in names only their own family may take (and replace). */
const RESERVED_FAMILY_NAMES: ReadonlyMap<string, GuildMcpServerType> = new Map([
  ["fetch_url", "url_fetcher"],
  ["web_search", "web_search"]
])

/** The bundled tool each replacement family hides. */
const REPLACED_BUILTIN: Readonly<Record<Exclude<GuildMcpServerType, "generic">, string>> = {
  url_fetcher: "fetch_url",
  web_search: "web_search"
}

export interface ConnectedServer {
  readonly config: GuildMcpServerConfig
  readonly tools: ReadonlyArray<McpToolInfo>
}

interface ExposedTool {
  readonly config: GuildMcpServerConfig
  readonly info: McpToolInfo
}

export interface GuildExposure {
  readonly tools: ReadonlyArray<ExposedTool>
  readonly hiddenBuiltins: ReadonlyArray<string>
  /** The declared tools of the one server replacing each hidden built-in. */
  readonly replacements: ReadonlyMap<string, ReadonlyArray<string>>
  /** The guild url_fetcher's function, when it replaces `fetch_url`. */
  readonly urlFetchTool: string | undefined
  /** Why tools were left out (logged as warnings). */
  readonly warnings: ReadonlyArray<string>
}

/** `{url_fetch_tool}` prompt macro: the guild url_fetcher function, else the bundled `fetch_url`. */
export const resolveUrlFetchTool = (exposure: Pick<GuildExposure, "urlFetchTool">): string => exposure.urlFetchTool ?? "fetch_url"

/**
 * @param enabled every enabled registration of the guild (connected or not): a replacement
 *   family is replaceable only when exactly one enabled server of that type exists.
 * @param connected the enabled servers that are connected, with their tools.
 */
/** What one tool's declaration costs against the per-turn budget (name, description, schema). */
export const declarationChars = (info: McpToolInfo): number =>
  info.declaredName.length + info.description.length + JSON.stringify(info.inputSchema).length

export const exposeGuildTools = (
  enabled: ReadonlyArray<GuildMcpServerConfig>,
  connected: ReadonlyArray<ConnectedServer>,
  options: {
    /** Serialized characters of all routed declarations (a bound on untrusted servers); the rest are skipped. */
    readonly declarationsMaxChars: number
  } = { declarationsMaxChars: Number.POSITIVE_INFINITY }
): GuildExposure => {
  const warnings: Array<string> = []
  // Who provides each declared name (a name twice in one server is ambiguous too).
  const providers = new Map<string, Array<ExposedTool>>()
  for (const server of connected) {
    for (const info of server.tools) {
      const list = providers.get(info.declaredName) ?? []
      list.push({ config: server.config, info })
      providers.set(info.declaredName, list)
    }
  }

  const routed: Array<ExposedTool> = []
  for (const [name, list] of providers) {
    const only = list[0]
    if (list.length !== 1 || only === undefined) {
      const servers = [...new Set(list.map((entry) => entry.config.name))].join(", ")
      warnings.push(`Guild MCP tool '${name}' is provided more than once (${servers}); it is not routed`)
      continue
    }
    const family = RESERVED_FAMILY_NAMES.get(name)
    if (family !== undefined && only.config.type !== family) {
      warnings.push(`Guild MCP tool '${name}' of '${only.config.name}' is hidden: only a ${family} server may take that name`)
      continue
    }
    routed.push(only)
  }

  // In registration order: a later server's tools are the ones left out when the turn is full.
  let spent = 0
  const overBudget: Array<string> = []
  const declared = routed.filter((entry) => {
    const cost = declarationChars(entry.info)
    if (spent + cost > options.declarationsMaxChars) {
      overBudget.push(entry.info.declaredName)
      return false
    }
    spent += cost
    return true
  })
  if (overBudget.length > 0) {
    warnings.push(
      `${overBudget.length} guild MCP tool(s) left out: the guild's declarations would exceed ${options.declarationsMaxChars} characters (${overBudget.slice(0, 5).join(", ")}${overBudget.length > 5 ? ", …" : ""})`
    )
  }

  const hiddenBuiltins: Array<string> = []
  const replacements = new Map<string, ReadonlyArray<string>>()
  let urlFetchTool: string | undefined
  for (const family of ["url_fetcher", "web_search"] as const) {
    const servers = enabled.filter((config) => config.type === family)
    const replacer = servers[0]
    if (servers.length !== 1 || replacer === undefined) {
      if (servers.length > 1) warnings.push(`${servers.length} enabled ${family} MCP servers: none replaces '${REPLACED_BUILTIN[family]}'`)
      continue
    }
    const functions = declared.filter((entry) => entry.config.name === replacer.name).map((entry) => entry.info.declaredName)
    if (functions.length === 0) continue
    hiddenBuiltins.push(REPLACED_BUILTIN[family])
    replacements.set(REPLACED_BUILTIN[family], functions)
    if (family === "url_fetcher") urlFetchTool = functions.find((name) => /fetch/i.test(name)) ?? functions[0]
  }

  return { tools: declared, hiddenBuiltins, replacements, urlFetchTool, warnings }
}
