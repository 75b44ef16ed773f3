import { Effect, Option } from "effect"
import { McpConfig, type McpSettings } from "../config/McpConfig"
import type { DiscoveryLimits } from "./connectAttempt"
import { connectInOrder, type PlannedAttempt } from "./connectInOrder"
import { GuildMcpHttp } from "./GuildMcpHttp"
import type { GuildMcpServerConfig } from "./GuildMcpRegistry"
import { type McpAttemptFailure, McpConnectError } from "./McpErrors"
import type { McpSession } from "./McpSession"
import { isLegacyHint, sseAttempt, streamableHttpAttempt } from "./mcpTransports"
import { abortableFetch } from "./requestSignal"
import { isSmitheryHosted, makeSmitheryConnector } from "./SmitheryConnect"

const always = (_failure: McpAttemptFailure) => true
const never = (_failure: McpAttemptFailure) => false

/** What a guild server's `tools/list` may make us keep (docs/architecture.md, Bounds on untrusted tool servers). */
const guildDiscoveryLimits = (settings: McpSettings): DiscoveryLimits => ({
  maxPages: settings.guildMaxToolPages,
  maxTools: settings.guildMaxTools,
  descriptionMaxChars: settings.guildDescriptionMaxChars,
  schemaMaxChars: settings.guildSchemaMaxBytes,
  schemaMaxDepth: settings.guildSchemaMaxDepth
})

/** Connects one guild server: a fresh client per transport attempt, each bounded by the connect timeout. */
export type GuildConnector = (config: GuildMcpServerConfig) => Effect.Effect<McpSession, McpConnectError>

/**
 * Transport order: Smithery Connect first for `*.run.tools` hosts when a Smithery key is
 * configured, then Streamable HTTP, then SSE, the latter only when Streamable HTTP answered a 4xx.
 * The direct transports never carry the Smithery key.
 */
export const makeGuildConnector: Effect.Effect<GuildConnector, never, McpConfig | GuildMcpHttp> = Effect.gen(function* () {
  const settings = yield* McpConfig
  const http = yield* GuildMcpHttp
  const smithery = yield* Effect.transposeOption(
    Option.map(settings.smithery, (smitherySettings) =>
      Effect.flatMap(http.fetchFor(new URL(smitherySettings.baseUrl)), (fetch) =>
        makeSmitheryConnector(smitherySettings, abortableFetch(fetch))
      )
    )
  )

  return (config) => {
    if (!URL.canParse(config.url)) {
      return Effect.fail(
        new McpConnectError({
          server: config.name,
          attempts: [{ transport: "streamable-http", reason: "protocol", detail: "the registered URL is not a URL" }]
        })
      )
    }
    const url = new URL(config.url)
    return Effect.flatMap(http.fetchFor(url), (fetch) => {
      const direct = { url, fetch: abortableFetch(fetch), headers: config.headers }
      const plan: Array<PlannedAttempt> = []
      if (Option.isSome(smithery) && isSmitheryHosted(url)) {
        plan.push({ attempt: smithery.value.attempt(url, config.name, config.headers), continueAfter: always })
      }
      plan.push({ attempt: streamableHttpAttempt(direct), continueAfter: isLegacyHint })
      plan.push({ attempt: sseAttempt(direct), continueAfter: never })
      return connectInOrder(config.name, plan, { timeout: settings.guildConnectTimeout, limits: guildDiscoveryLimits(settings), target: url })
    })
  }
})
