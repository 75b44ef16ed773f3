import { Context, Effect, Layer } from "effect"
import { LoopConfig } from "../../config/LoopConfig"
import { type DeliberateToolMode, deliberateModeOff } from "../../domain/DeliberateToolMode"
import { GuildSettingsStore } from "../../store/GuildSettingsStore"
import { GuildToolSource } from "../GuildToolSource"
import { ToolAffordances } from "../ToolAffordances"
import { ToolRegistry } from "../ToolRegistry"
import { planDeliberateToolMode } from "./planDeliberateToolMode"

interface DeliberatePlanRequest {
  readonly guildId: string | undefined
  readonly channelId: string
  readonly messageText: string
}

const make = Effect.gen(function* () {
  const settings = yield* GuildSettingsStore
  const registry = yield* ToolRegistry
  const guildTools = yield* GuildToolSource
  const affordances = yield* ToolAffordances
  const loop = yield* LoopConfig

  const plan = Effect.fn("DeliberateToolPlanner.plan")(function* (request: DeliberatePlanRequest) {
    const guildId = request.guildId
    if (guildId === undefined) return deliberateModeOff
    const enabled = yield* settings.isEnabled(guildId, "deliberate_tool_mode").pipe(
      Effect.catch((error) =>
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
      // A guild server that replaces a built-in answers the built-in's trigger phrases (the
      // guild tool source says which tools replace which built-in).
      replacements: guildSet.replacements ?? new Map()
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

/**
 * Plans each turn's deliberate tool mode from live state: the guild's `deliberate_tool_mode`
 * capability, every registered and guild tool with its trigger phrases, and the channel's
 * retained affordances. The front calls `plan` when it builds a TurnInput. DMs are never in
 * deliberate mode; a settings lookup that fails leaves the mode off (and is logged).
 */
export class DeliberateToolPlanner extends Context.Service<DeliberateToolPlanner, Effect.Success<typeof make>>()("loopcord/tools/DeliberateToolPlanner") {
  /** The planner over explicit dependencies (tests, or fronts that build their own layers). */
  static readonly layer: Layer.Layer<
    DeliberateToolPlanner,
    never,
    GuildSettingsStore | ToolRegistry | GuildToolSource | ToolAffordances | LoopConfig
  > = Layer.effect(DeliberateToolPlanner, make)
}
