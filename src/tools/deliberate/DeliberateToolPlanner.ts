import { Effect, Layer } from "effect"
import { LoopConfig } from "../../config/LoopConfig"
import { type DeliberateToolMode, deliberateModeOff } from "../../domain/DeliberateToolMode"
import { GuildMcpRegistry, type GuildMcpServerType } from "../../mcp/GuildMcpRegistry"
import { GuildSettingsStore } from "../../store/GuildSettingsStore"
import { type GuildToolSet, GuildToolSource } from "../GuildToolSource"
import { ToolAffordances } from "../ToolAffordances"
import { ToolRegistry } from "../ToolRegistry"
import { planDeliberateToolMode } from "./planDeliberateToolMode"

export interface DeliberatePlanRequest {
  readonly guildId: string | undefined
  readonly channelId: string
  readonly messageText: string
}

/**
 * Plans each turn's deliberate tool mode from live state: the guild's `deliberate_tool_mode`
 * capability, every registered and guild tool with its trigger phrases, and the channel's
 * retained affordances. The front calls `plan` when it builds a TurnInput. DMs are never in
 * deliberate mode; a settings lookup that fails leaves the mode off (and is logged).
 */
export class DeliberateToolPlanner extends Effect.Service<DeliberateToolPlanner>()("loopcord/tools/DeliberateToolPlanner", {
  effect: Effect.gen(function* () {
    const settings = yield* GuildSettingsStore
    const registry = yield* ToolRegistry
    const guildTools = yield* GuildToolSource
    const affordances = yield* ToolAffordances
    const mcpRegistry = yield* GuildMcpRegistry
    const loop = yield* LoopConfig

    /** fetch_url → the guild's url_fetcher tools, web_search → its web_search tools (spec §6.3). */
    const replacementsFor = (guildId: string, guildSet: GuildToolSet) =>
      Effect.gen(function* () {
        if (guildSet.hiddenBuiltins.length === 0) return new Map<string, ReadonlyArray<string>>()
        const servers = yield* mcpRegistry.list(guildId).pipe(Effect.orElseSucceed(() => []))
        const typeOf = new Map(servers.map((server) => [server.name.toLowerCase(), server.type] as const))
        const toolsOfType = (type: GuildMcpServerType) =>
          guildSet.tools
            .filter((tool) => tool.source.kind === "mcp" && typeOf.get(tool.source.server.toLowerCase()) === type)
            .map((tool) => tool.name)
        const builtinType: Readonly<Record<string, GuildMcpServerType>> = { fetch_url: "url_fetcher", web_search: "web_search" }
        return new Map(
          guildSet.hiddenBuiltins.flatMap((builtin) => {
            const type = builtinType[builtin]
            return type === undefined ? [] : [[builtin, toolsOfType(type)] as const]
          })
        )
      })

    const plan = Effect.fn("DeliberateToolPlanner.plan")(function* (request: DeliberatePlanRequest) {
      const guildId = request.guildId
      if (guildId === undefined) return deliberateModeOff
      const enabled = yield* settings.isEnabled(guildId, "deliberate_tool_mode").pipe(
        Effect.catchAll((error) =>
          Effect.as(Effect.logWarning(`Deliberate tool mode left off: ${error.message}`), false)
        )
      )
      if (!enabled) return deliberateModeOff
      const registered = yield* registry.all
      const guildSet = yield* guildTools.forGuild(guildId)
      const mode: DeliberateToolMode = planDeliberateToolMode({
        enabled,
        messageText: request.messageText,
        tools: [...registered, ...guildSet.tools],
        retained: yield* affordances.retained(request.channelId),
        contextTurns: loop.deliberateToolContextTurns,
        // A guild server that replaces a built-in answers the built-in's trigger phrases.
        replacements: yield* replacementsFor(guildId, guildSet)
      })
      yield* Effect.logDebug(
        mode.disableAllTools === true
          ? "Deliberate tool mode: no tool intent, no tools this turn"
          : `Deliberate tool mode: allowing ${mode.allowedNames.join(", ")}`
      )
      return mode
    })

    return { plan } as const
  })
}) {
  /** The planner over explicit dependencies (tests, or fronts that build their own layers). */
  static readonly layer: Layer.Layer<
    DeliberateToolPlanner,
    never,
    GuildSettingsStore | GuildMcpRegistry | ToolRegistry | GuildToolSource | ToolAffordances | LoopConfig
  > = DeliberateToolPlanner.Default
}
