import { Context, Effect, Layer, Option, Result } from "effect"
import { McpConfig } from "../config/McpConfig"
import type { ToolArgs } from "../domain/FunctionCall"
import { type ToolResult, toolFailure } from "../domain/ToolResult"
import { toolFailureClassText } from "../domain/ToolFailureClass"
import { AddressPolicy } from "../fetch/AddressPolicy"
import { type GuildToolSet, GuildToolSource } from "../tools/GuildToolSource"
import { ToolContext } from "../tools/ToolContext"
import { ToolError } from "../tools/ToolError"
import { callMcpTool } from "./callMcpTool"
import { type ConnectedServer, exposeGuildTools, type GuildExposure, resolveUrlFetchTool } from "./guildExposure"
import { GuildMcpPool, sameServerName } from "./GuildMcpPool"
import { type GuildMcpServerConfig, GuildMcpRegistry } from "./GuildMcpRegistry"
import { toToolResult } from "./mcpResult"
import type { McpToolInfo } from "./McpSession"
import { makeMcpTool } from "./mcpTool"
import { urlArguments } from "./urlArguments"

/** A guild's MCP tools for one turn, plus what the `{url_fetch_tool}` macro resolves to. */
interface GuildMcpToolSet extends GuildToolSet {
  readonly urlFetchTool: string
}

const makeGuildMcpTools = Effect.gen(function* () {
  const pool = yield* GuildMcpPool
  const registry = yield* GuildMcpRegistry
  const policy = yield* AddressPolicy
  const settings = yield* McpConfig

  const currentRegistration = (guildId: string, name: string) =>
    registry.list(guildId).pipe(
      Effect.map((configs) => Option.fromNullishOr(configs.find((config) => sameServerName(config.name, name) && config.enabled))),
      Effect.orElseSucceed(() => Option.none<GuildMcpServerConfig>())
    )

  /** The first URL argument the address policy refuses, as the failure the model sees. */
  const refusedUrl = (config: GuildMcpServerConfig, info: McpToolInfo, args: ToolArgs) =>
    Effect.gen(function* () {
      if (config.type === "generic") return Option.none<ToolResult>()
      for (const url of urlArguments(info.inputSchema, args)) {
        const refusal = yield* Effect.flip(policy.validate(url)).pipe(Effect.option)
        if (Option.isSome(refusal)) {
          // The kind of refusal only: the resolved addresses stay with operators.
          return Option.some(toolFailure(`The URL ${url} was refused: ${toolFailureClassText[refusal.value.failureClass]}.`, { detail: refusal.value.message }))
        }
      }
      return Option.none<ToolResult>()
    })

  const progressText = (config: GuildMcpServerConfig, info: McpToolInfo, args: ToolArgs): string => {
    const firstUrl = urlArguments(info.inputSchema, args)[0]
    return config.type === "url_fetcher" && firstUrl !== undefined
      ? `Fetching ${firstUrl}`
      : `Using ${info.mcpName} (${config.name})`
  }

  const execute = (guildId: string, serverName: string, declaredName: string) =>
    Effect.fn("GuildMcpTools.execute")(function* (args: ToolArgs) {
      const context = yield* ToolContext
      const registration = yield* currentRegistration(guildId, serverName)
      if (Option.isNone(registration)) {
        return toolFailure(`The MCP server '${serverName}' is no longer enabled in this server.`)
      }
      const config = registration.value
      const session = yield* pool.session(config).pipe(
        // The pool logged why; the guild is told only that the server is unreachable.
        Effect.mapError((error) =>
          new ToolError({ tool: declaredName, error: error._tag === "McpConnectError" ? `${error.publicMessage} right now.` : error.message, detail: error.message })
        )
      )
      const info = session.tools.find((tool) => tool.declaredName === declaredName)
      if (info === undefined) {
        return toolFailure(`The MCP server '${serverName}' no longer provides '${declaredName}'.`)
      }
      const refusal = yield* refusedUrl(config, info, args)
      if (Option.isSome(refusal)) return refusal.value
      if (!context.suppressProgressNotices) yield* context.progress(progressText(config, info, args))

      const output = yield* callMcpTool(session, info, args, {
        timeout: settings.guildExecutionTimeout,
        abortSignal: context.abortSignal
      }).pipe(
        Effect.ensuring(pool.touch(config, session)),
        Effect.catchTag("McpCallError", (error) => {
          if (error.reason === "transport" || error.reason === "too_large") {
            // The connection is gone (closed, broken stream): the next use must reconnect.
            return Effect.andThen(pool.invalidate(config, session), new ToolError({ tool: declaredName, error: error.modelText, detail: error.message }))
          }
          if (error.reason !== "session_expired") return new ToolError({ tool: declaredName, error: error.modelText, detail: error.message })
          // Re-establish once; the call already sent is not replayed (it may have side effects).
          return pool.invalidate(config, session).pipe(
            Effect.andThen(Effect.result(pool.session(config))),
            Effect.flatMap((renewed) =>
              new ToolError({
                tool: declaredName,
                error: Result.isSuccess(renewed)
                  ? `The MCP server '${serverName}' had dropped its session; a new session is open but this call was not run. Call the tool again if it is still needed.`
                  : `The MCP server '${serverName}' dropped its session and reconnecting failed: ${renewed.failure._tag === "McpConnectError" ? renewed.failure.publicMessage : renewed.failure.message}`,
                ...(Result.isFailure(renewed) ? { detail: renewed.failure.message } : {})
              })
            )
          )
        })
      )
      return toToolResult(info.mcpName, output, settings.resultMaxChars)
    })

  const exposure = Effect.fn("GuildMcpTools.exposure")(function* (guildId: string) {
    const configs = yield* registry.list(guildId).pipe(
      Effect.catch((error) =>
        Effect.as(Effect.logWarning(`Guild MCP registrations unavailable: ${error.message}`), [])
      )
    )
    const enabled = configs.filter((config) => config.enabled)
    const connected = yield* Effect.forEach(
      enabled,
      (config) =>
        pool.session(config).pipe(
          Effect.map((session): Option.Option<ConnectedServer> => Option.some({ config, tools: session.tools })),
          // The pool already logged the connect failure; a broken server only drops its tools.
          Effect.catch((error) => Effect.as(Effect.logDebug(error.message), Option.none()))
        ),
      { concurrency: "unbounded" }
    )
    const result: GuildExposure = exposeGuildTools(enabled, connected.flatMap(Option.toArray), {
      declarationsMaxChars: settings.guildDeclarationsMaxBytes
    })
    for (const warning of result.warnings) yield* Effect.logWarning(warning)
    return result
  })

  /** Never fails: a broken server or registry costs the guild its tools, never the turn. */
  const forGuild = Effect.fn("GuildMcpTools.forGuild")(function* (guildId: string) {
    const result = yield* exposure(guildId)
    const set: GuildMcpToolSet = {
      tools: result.tools.map(({ config, info }) =>
        makeMcpTool({ info, scope: "guild", server: config.name, execute: execute(guildId, config.name, info.declaredName) })
      ),
      hiddenBuiltins: result.hiddenBuiltins,
      replacements: result.replacements,
      urlFetchTool: resolveUrlFetchTool(result)
    }
    return set
  })

  /** The `{url_fetch_tool}` prompt macro for this guild. */
  const urlFetchToolName = Effect.fn("GuildMcpTools.urlFetchToolName")(function* (guildId: string) {
    return resolveUrlFetchTool(yield* exposure(guildId))
  })

  return { forGuild, urlFetchToolName } as const
})

/**
 * Guild MCP servers as tools (docs/architecture.md, Guild MCP servers): lazy connections through
 * the pool, the exposure rules, and execution that re-checks the registration, validates URL
 * arguments of replacement families with the fetch_url address policy, and bounds each call.
 */
export class GuildMcpTools extends Context.Service<GuildMcpTools, Effect.Success<typeof makeGuildMcpTools>>()("loopcord/mcp/GuildMcpTools") {
  /** Needs the pool, the registry, fetch_url's AddressPolicy and McpConfig. */
  static readonly Default: Layer.Layer<GuildMcpTools, never, GuildMcpPool | GuildMcpRegistry | AddressPolicy | McpConfig> = Layer.effect(GuildMcpTools, makeGuildMcpTools)

  /** The GuildToolSource the tool registry consumes. */
  static readonly toolSource: Layer.Layer<GuildToolSource, never, GuildMcpTools> = Layer.effect(
    GuildToolSource,
    Effect.map(GuildMcpTools, (tools) => ({ forGuild: tools.forGuild }))
  )
}
