import { Cause, Chunk, Clock, Context, Data, Effect, Layer, Option, Ref } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import { toolFailure, type ToolResult } from "../domain/ToolResult"
import { toolFailureClassText } from "../domain/ToolFailureClass"
import { assembleTools } from "./assembly"
import { availabilityOf, routeTool, selectTurnTools } from "./availability"
import { closestName } from "./closestName"
import { emptyGuildToolSet, GuildToolSource, type GuildToolSet } from "./GuildToolSource"
import type { AvailabilityContext, Tool } from "./Tool"
import type { TurnState } from "./TurnState"
import { ToolContext, type ToolContextShape } from "./ToolContext"
import { ToolError } from "./ToolError"
import { OpaqueIds, resolveOpaqueIds, unknownIdMessage } from "./OpaqueIds"
import { invalidToolReason, TOOL_NAME_PATTERN } from "./toolValidation"

/** A registration was refused: duplicate name, invalid definition, alias to nothing. */
class ToolRegistrationError extends Data.TaggedError("ToolRegistrationError")<{
  readonly tool: string
  readonly reason: "duplicate" | "invalid" | "unknown_alias_target"
  readonly detail: string
}> {
  override get message(): string {
    return `Cannot register tool '${this.tool}': ${this.detail}`
  }
}

/** One dispatch, kept in a bounded history (max 1000, trimmed to the last 900). */
interface ToolExecutionRecord {
  readonly name: string
  readonly args: ToolArgs
  readonly success: boolean
  readonly error: string | undefined
  readonly durationMs: number
  readonly at: number
}

/**
 * Every tool the bot can call (docs/architecture.md, Tool availability and assembly): built-ins and global MCP tools are registered here;
 * guild MCP tools come from GuildToolSource per turn.
 */
export interface ToolRegistryShape {
  readonly register: (tool: Tool) => Effect.Effect<void, ToolRegistrationError>
  /** Removes a tool (a global MCP server went away). */
  readonly unregister: (name: string) => Effect.Effect<boolean>
  /** `remember_this_fact` → `create_long_term_memory` style aliases. */
  readonly registerAlias: (alias: string, target: string) => Effect.Effect<void, ToolRegistrationError>
  /** Alias-aware lookup among registered tools. */
  readonly get: (name: string) => Effect.Effect<Option.Option<Tool>>
  readonly all: Effect.Effect<ReadonlyArray<Tool>>
  /**
   * The tools to declare for this turn: provider and context availability, guild tools and
   * their replacements, then dynamic assembly.
   */
  readonly toolsForTurn: (context: AvailabilityContext) => Effect.Effect<ReadonlyArray<Tool>>
  /** With the turn's state, the guild's tools are the ones the turn already saw. */
  readonly requiresFollowUp: (
    name: string,
    provider: string,
    guildId: string | undefined,
    turnState?: TurnState
  ) => Effect.Effect<boolean>
  /**
   * Dispatch by name with the two availability gates. Never fails:
   * unknown tools, gate rejections, ToolErrors and defects become failed results.
   */
  readonly execute: (name: string, args: ToolArgs) => Effect.Effect<ToolResult, never, ToolContext>
  /** Most recent first. */
  readonly executionHistory: (limit?: number) => Effect.Effect<ReadonlyArray<ToolExecutionRecord>>
}

/** Execution history bounds: past the maximum, only the most recent are kept. */
export const EXECUTION_HISTORY_MAX = 1000
export const EXECUTION_HISTORY_KEEP = 900

interface Registered {
  /** Insertion order is declaration order. */
  readonly tools: ReadonlyMap<string, Tool>
  readonly aliases: ReadonlyMap<string, string>
}

/** A tool that failed in a way it did not describe: the model hears the class, operators the rest. */
const internalFailure = (tool: string, detail: string): ToolResult =>
  toolFailure(`Tool '${tool}' failed: ${toolFailureClassText.internal_error}.`, { detail })

const describeDefect = (defect: unknown): string =>
  defect instanceof Error ? defect.message : typeof defect === "string" ? defect : Cause.pretty(Cause.die(defect))

/** The registry; dependencies (the guild tool source) are resolved here so methods have `R = never`. */
export const make: Effect.Effect<ToolRegistryShape, never, GuildToolSource> = Effect.gen(function*() {
  const guildSource = yield* GuildToolSource
  // Optional: without a media library there are no opaque ids to resolve.
  const opaqueIds = yield* Effect.serviceOption(OpaqueIds)
  const state = yield* Ref.make<Registered>({ tools: new Map(), aliases: new Map() })
  // Most recent first. A Chunk: prepending does not copy the up to 1000 records on every call.
  const history = yield* Ref.make(Chunk.empty<ToolExecutionRecord>())

  const resolveAlias = (registered: Registered, name: string) => registered.aliases.get(name) ?? name
  // A broken guild source costs the guild its tools, never the turn.
  const guildTools = (guildId: string | undefined): Effect.Effect<GuildToolSet> =>
    guildId === undefined
      ? Effect.succeed(emptyGuildToolSet)
      : Effect.suspend(() => guildSource.forGuild(guildId)).pipe(
        Effect.catchDefect((defect) =>
          Effect.as(Effect.logWarning(`Guild tools of ${guildId} unavailable: ${describeDefect(defect)}`), emptyGuildToolSet)
        )
      )

  /**
   * The guild's tools, asked of the source once per turn when the turn's state is known (the
   * declared tools, the dispatch and the follow-up check then agree); `fresh` on a new answer.
   */
  const guildToolsOfTurn = (
    guildId: string | undefined,
    turnState: TurnState | undefined
  ): Effect.Effect<{ readonly set: GuildToolSet; readonly fresh: boolean }> => {
    const cache = turnState?.guildTools
    if (guildId === undefined) return Effect.succeed({ set: emptyGuildToolSet, fresh: false })
    if (cache === undefined) return Effect.map(guildTools(guildId), (set) => ({ set, fresh: true }))
    return Effect.flatMap(Ref.get(cache), (cached): Effect.Effect<{ readonly set: GuildToolSet; readonly fresh: boolean }> =>
      Option.isSome(cached) && cached.value.guildId === guildId
        ? Effect.succeed({ set: cached.value.set, fresh: false })
        : Effect.map(
          Effect.tap(guildTools(guildId), (set) => Ref.set(cache, Option.some({ guildId, set }))),
          (set) => ({ set, fresh: true })
        ))
  }

  const register = Effect.fn("ToolRegistry.register")(function*(tool: Tool) {
    const invalid = invalidToolReason(tool)
    if (invalid !== undefined) {
      const name: unknown = typeof tool === "object" && tool !== null ? tool.name : undefined
      return yield* new ToolRegistrationError({ tool: String(name), reason: "invalid", detail: invalid })
    }
    const outcome = yield* Ref.modify(state, (registered): [ToolRegistrationError | undefined, Registered] => {
      if (registered.tools.has(tool.name) || registered.aliases.has(tool.name)) {
        return [new ToolRegistrationError({ tool: tool.name, reason: "duplicate", detail: "a tool or alias with this name is already registered" }), registered]
      }
      return [undefined, { ...registered, tools: new Map(registered.tools).set(tool.name, tool) }]
    })
    if (outcome !== undefined) return yield* outcome
  })

  const registerAlias = Effect.fn("ToolRegistry.registerAlias")(function*(alias: string, target: string) {
    if (!TOOL_NAME_PATTERN.test(alias)) {
      return yield* new ToolRegistrationError({ tool: alias, reason: "invalid", detail: "an alias must be a valid tool name" })
    }
    const outcome = yield* Ref.modify(state, (registered): [ToolRegistrationError | undefined, Registered] => {
      if (registered.tools.has(alias) || registered.aliases.has(alias)) {
        return [new ToolRegistrationError({ tool: alias, reason: "duplicate", detail: "a tool or alias with this name is already registered" }), registered]
      }
      if (!registered.tools.has(target)) {
        return [new ToolRegistrationError({ tool: alias, reason: "unknown_alias_target", detail: `no tool named '${target}' is registered` }), registered]
      }
      return [undefined, { ...registered, aliases: new Map(registered.aliases).set(alias, target) }]
    })
    if (outcome !== undefined) return yield* outcome
  })

  const unregister = (name: string) =>
    Ref.modify(state, (registered): [boolean, Registered] => {
      if (!registered.tools.has(name)) return [false, registered]
      const tools = new Map(registered.tools)
      tools.delete(name)
      // Aliases of a removed tool would dangle.
      const aliases = new Map([...registered.aliases].filter(([, target]) => target !== name))
      return [true, { tools, aliases }]
    })

  const get = (name: string) =>
    Effect.map(Ref.get(state), (registered) => Option.fromNullishOr(registered.tools.get(resolveAlias(registered, name))))

  const all = Effect.map(Ref.get(state), (registered): ReadonlyArray<Tool> => [...registered.tools.values()])

  /** Registered and guild tools usable in this context, before assembly; problems are logged (collisions once per guild answer). */
  const usableTools = (context: AvailabilityContext, guild: GuildToolSet, freshGuildSet = true) =>
    Effect.gen(function*() {
      const selection = selectTurnTools(yield* all, guild, context)
      for (const name of freshGuildSet ? selection.collisions : []) {
        yield* Effect.logWarning(`Guild tool '${name}' dropped: its name collides with a built-in or global tool`)
      }
      for (const { failure, tool } of selection.checkFailures) {
        yield* Effect.logWarning(`Tool '${tool}' hidden: its availability check failed: ${describeDefect(failure)}`)
      }
      return selection.tools
    })

  // Per-pass and per-call methods are untraced: a span each is pure overhead with no tracer installed.
  const toolsForTurn = Effect.fnUntraced(function*(context: AvailabilityContext) {
    const guild = yield* guildToolsOfTurn(context.guildId, context.turnState)
    const usable = yield* usableTools(context, guild.set, guild.fresh)
    return yield* assembleTools(usable, context)
  })

  const requiresFollowUp = Effect.fnUntraced(
    function*(name: string, _provider: string, guildId: string | undefined, turnState?: TurnState) {
      const registered = yield* Ref.get(state)
      const tool = routeTool(resolveAlias(registered, name), registered.tools, (yield* guildToolsOfTurn(guildId, turnState)).set)
      // MCP output only reaches the user through a follow-up pass.
      return tool === undefined ? false : tool.source.kind === "mcp" ? true : tool.requiresFollowUp ?? false
    }
  )

  const recordExecution = (record: ToolExecutionRecord) =>
    Ref.update(history, (records) => {
      const next = Chunk.prepend(records, record)
      // Trimmed into a fresh array (every 100 calls), so the dropped records are not kept alive.
      return Chunk.size(next) > EXECUTION_HISTORY_MAX
        ? Chunk.fromArrayUnsafe(Chunk.toArray(Chunk.take(next, EXECUTION_HISTORY_KEEP)))
        : next
    })

  /** The two availability gates and the dispatch itself; a failed result for anything that goes wrong. */
  const dispatch = (requested: string, args: ToolArgs, context: ToolContextShape) =>
    Effect.gen(function*() {
      const registered = yield* Ref.get(state)
      const name = resolveAlias(registered, requested)
      const direct = registered.tools.get(name)
      // A global MCP tool routes first: no need to ask the guild source.
      const guild = direct !== undefined && direct.source.kind === "mcp" && direct.source.scope === "global"
        ? { set: emptyGuildToolSet, fresh: false }
        : yield* guildToolsOfTurn(context.guildId, context.turnState)
      const availability: AvailabilityContext = {
        provider: context.provider,
        model: context.model,
        guildId: context.guildId,
        channelId: context.channelId,
        flags: yield* Ref.get(context.turnState.flags)
      }
      const tool = routeTool(name, registered.tools, guild.set)
      if (tool === undefined) {
        const usable = (yield* usableTools(availability, guild.set, guild.fresh)).map((candidate) => candidate.name)
        const suggestion = closestName(requested, usable)
        const error = `Tool '${requested}' not found.${suggestion === undefined ? "" : ` Did you mean '${suggestion}'?`} ` +
          `Available tools: ${usable.length === 0 ? "(none)" : usable.join(", ")}`
        yield* Effect.logError(error)
        return toolFailure(error)
      }
      const gate = availabilityOf(tool, availability)
      if (gate._tag === "UnsupportedProvider") {
        const error = `Tool '${requested}' is not available for provider '${context.provider}'`
        yield* Effect.logError(error)
        return toolFailure(error)
      }
      if (gate._tag === "UnavailableInContext") {
        // Fed back to the model: it must read as "not now", never as a provider gap.
        const error = `Tool '${requested}' is not available for the current turn: it already ran this turn, ` +
          `or this model or server configuration does not support it. Do not call it again this turn.`
        yield* Effect.logWarning(error).pipe(
          Effect.annotateLogs(gate.checkFailure === undefined ? {} : { checkFailure: describeDefect(gate.checkFailure) })
        )
        return toolFailure(error)
      }
      // Opaque ids for built-ins: MCP tools get the arguments as written.
      if (tool.source.kind === "builtin" && Option.isSome(opaqueIds)) {
        const resolution = yield* resolveOpaqueIds(args, opaqueIds.value)
        if (resolution._tag === "Unknown") {
          const error = unknownIdMessage(resolution.unknown)
          yield* Effect.logWarning(`Tool '${requested}': ${error}`)
          return toolFailure(error)
        }
        return yield* runTool(tool, resolution.args)
      }
      return yield* runTool(tool, args)
    })

  /** Runs the tool: ToolErrors and defects become failed results, an interruption propagates. */
  const runTool = (tool: Tool, args: ToolArgs): Effect.Effect<ToolResult, never, ToolContext> =>
    Effect.suspend(() => tool.execute(args)).pipe(
      Effect.catch((error: unknown) => {
        if (error instanceof ToolError) {
          return Effect.as(
            Effect.logWarning(`Tool '${tool.name}' failed: ${error.error}${error.detail === undefined ? "" : ` (${error.detail})`}`),
            toolFailure(error.error, {
              ...(error.userMessage === undefined ? {} : { message: error.userMessage }),
              ...(error.detail === undefined ? {} : { detail: error.detail })
            })
          )
        }
        const detail = describeDefect(error)
        return Effect.as(Effect.logError(`Tool '${tool.name}' failed with an unexpected error: ${detail}`), internalFailure(tool.name, detail))
      }),
      Effect.catchDefect((defect) => {
        const detail = describeDefect(defect)
        return Effect.as(
          Effect.logError(`Tool '${tool.name}' crashed: ${detail}`).pipe(Effect.annotateLogs({ defect: Cause.pretty(Cause.die(defect)) })),
          internalFailure(tool.name, detail)
        )
      })
    )

  const execute = Effect.fnUntraced(function*(name: string, args: ToolArgs) {
    const context = yield* ToolContext
    const startedAt = yield* Clock.currentTimeMillis
    const record = (success: boolean, error: string | undefined) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        recordExecution({ name, args, success, error, durationMs: now - startedAt, at: startedAt }))
    const result = yield* dispatch(name, args, context).pipe(
      Effect.onInterrupt(() => record(false, "interrupted"))
    )
    yield* record(result.success, result.success ? undefined : result.message ?? result.error)
    return result
  })

  const executionHistory = (limit = 100) =>
    Effect.map(Ref.get(history), (records): ReadonlyArray<ToolExecutionRecord> => Chunk.toReadonlyArray(Chunk.take(records, Math.max(0, limit))))

  return {
    register,
    unregister,
    registerAlias,
    get,
    all,
    toolsForTurn,
    requiresFollowUp,
    execute,
    executionHistory
  } satisfies ToolRegistryShape
})

export class ToolRegistry extends Context.Service<ToolRegistry, ToolRegistryShape>()("loopcord/tools/ToolRegistry") {
  /** The in-process registry; guild tools come from the provided GuildToolSource. */
  static readonly layer = Layer.effect(ToolRegistry, make)
}

/** Registers tools and aliases in one go (composition roots and tests). */
export const registerAll = (
  registry: ToolRegistryShape,
  tools: ReadonlyArray<Tool>,
  aliases: ReadonlyArray<readonly [alias: string, target: string]> = []
): Effect.Effect<void, ToolRegistrationError> =>
  Effect.andThen(
    Effect.forEach(tools, registry.register, { discard: true }),
    Effect.forEach(aliases, ([alias, target]) => registry.registerAlias(alias, target), { discard: true })
  )
