import type { GuildToolSet } from "./GuildToolSource"
import type { AvailabilityContext, Tool } from "./Tool"

/**
 * Which tools a turn may see and call (docs/architecture.md, Tool availability and assembly). Pure functions: the registry feeds them
 * its registered tools and the guild's tool set, and logs what they report.
 */

/** Engine names of the global search MCP servers: internal to web_search, never declared to the model. */
const HIDDEN_GLOBAL_MCP_NAMES: ReadonlySet<string> = new Set(["web-search", "iask-search", "monica-search"])

/** Why a tool may or may not be used right now. */
type Availability =
  | { readonly _tag: "Available" }
  /** `isAvailableFor(provider)` is false: static provider support. */
  | { readonly _tag: "UnsupportedProvider" }
  /** `isAvailableForContext` is false (or threw): live turn state, never phrased as a provider gap. */
  | { readonly _tag: "UnavailableInContext"; readonly checkFailure?: unknown }

const AVAILABLE: Availability = { _tag: "Available" }

/**
 * Both gates, provider first. A check that throws hides the tool for this turn
 * (a broken check must not take the turn down); the failure is returned so the caller can log it.
 */
export const availabilityOf = (tool: Tool, context: AvailabilityContext): Availability => {
  try {
    if (!tool.isAvailableFor(context.provider)) return { _tag: "UnsupportedProvider" }
  } catch (checkFailure) {
    return { _tag: "UnavailableInContext", checkFailure }
  }
  // A once-per-turn tool that already succeeded this turn is spent, whatever its own check says.
  if (tool.oncePerTurn === true && context.flags.spentOncePerTurnTools.includes(tool.name)) return { _tag: "UnavailableInContext" }
  try {
    return tool.isAvailableForContext === undefined || tool.isAvailableForContext(context) !== false
      ? AVAILABLE
      : { _tag: "UnavailableInContext" }
  } catch (checkFailure) {
    return { _tag: "UnavailableInContext", checkFailure }
  }
}

const isGlobalMcp = (tool: Tool): boolean => tool.source.kind === "mcp" && tool.source.scope === "global"

/** A registered built-in the guild replaced with its own tool. */
const isHiddenBuiltin = (tool: Tool, guild: GuildToolSet): boolean =>
  !isGlobalMcp(tool) && guild.hiddenBuiltins.includes(tool.name)

/** The tools a turn may use before assembly, plus what was left out and why (for warnings). */
interface TurnToolSelection {
  readonly tools: ReadonlyArray<Tool>
  /** Guild tools dropped because a built-in or global tool already has the name. */
  readonly collisions: ReadonlyArray<string>
  /** Availability checks that threw. */
  readonly checkFailures: ReadonlyArray<{ readonly tool: string; readonly failure: unknown }>
}

/**
 * The order: registered built-ins and global MCP tools (hidden engine names and replaced
 * built-ins removed) filtered by both gates, then the guild's tools, a guild tool never shadowing
 * a registered one except the built-in it replaces.
 */
export const selectTurnTools = (
  registered: ReadonlyArray<Tool>,
  guild: GuildToolSet,
  context: AvailabilityContext
): TurnToolSelection => {
  const tools: Array<Tool> = []
  const collisions: Array<string> = []
  const checkFailures: Array<{ tool: string; failure: unknown }> = []
  const admit = (tool: Tool) => {
    const availability = availabilityOf(tool, context)
    if (availability._tag === "Available") tools.push(tool)
    else if (availability._tag === "UnavailableInContext" && availability.checkFailure !== undefined) {
      checkFailures.push({ tool: tool.name, failure: availability.checkFailure })
    }
  }

  const registeredByName = new Map(registered.map((tool) => [tool.name, tool]))
  for (const tool of registered) {
    if (isGlobalMcp(tool) && HIDDEN_GLOBAL_MCP_NAMES.has(tool.name)) continue
    if (isHiddenBuiltin(tool, guild)) continue
    admit(tool)
  }
  const guildNames = new Set<string>()
  for (const tool of guild.tools) {
    const existing = registeredByName.get(tool.name)
    if ((existing !== undefined && !isHiddenBuiltin(existing, guild)) || guildNames.has(tool.name)) {
      collisions.push(tool.name)
      continue
    }
    guildNames.add(tool.name)
    admit(tool)
  }
  return { tools, collisions, checkFailures }
}

/**
 * The tool a call named `name` (alias already resolved) dispatches to:
 * a global MCP tool, else the guild's tool (which wins over the built-in it replaced), else a
 * built-in that the guild did not hide.
 */
export const routeTool = (
  name: string,
  registeredByName: ReadonlyMap<string, Tool>,
  guild: GuildToolSet
): Tool | undefined => {
  const registered = registeredByName.get(name)
  if (registered !== undefined && isGlobalMcp(registered)) return registered
  const guildTool = guild.tools.find((tool) => tool.name === name)
  if (guildTool !== undefined && (registered === undefined || isHiddenBuiltin(registered, guild))) return guildTool
  if (registered !== undefined && !isHiddenBuiltin(registered, guild)) return registered
  return undefined
}
