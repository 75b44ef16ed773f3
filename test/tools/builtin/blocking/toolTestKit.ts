import { Effect, Layer } from "effect"
import * as Stores from "../../../../src/store/Stores"
import type { AvailabilityContext, Tool } from "../../../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../../../src/tools/ToolContext"
import { initialTurnFlags, makeTurnState, type TurnFlags } from "../../../../src/tools/TurnState"

/**
 * Helpers for the Discord-side tool tests (memory, stickers, blocking): real stores over a fresh
 * SQLite `:memory:` database, and a ToolContext for calling a tool directly.
 */
export const memoryStores = Layer.fresh(Stores.layerMemory)

export const toolContext = (overrides: Partial<ToolContextShape> = {}): Effect.Effect<ToolContextShape> =>
  Effect.gen(function* () {
    const controller = new AbortController()
    return {
      channelId: "channel-1",
      guildId: "guild-1",
      userId: "user-1",
      messageId: "message-1",
      isDM: false,
      provider: "openai-compatible",
      model: "test-model",
      locale: "en",
      personaId: "persona-1",
      personaName: "Loopcord",
      personaAvatarUrl: undefined,
      isUserImpersonation: false,
      impersonatedUserId: undefined,
      suppressProgressNotices: false,
      showKillHint: false,
      iteration: 0,
      turnState: yield* makeTurnState(),
      abortSignal: controller.signal,
      killed: Effect.never,
      progress: () => Effect.void,
      ...overrides
    }
  })

/** Runs the tool's `execute` (arguments decoded by makeTool) in the given context. */
export const executeIn = (tool: Tool, args: Readonly<Record<string, unknown>>, context: ToolContextShape) =>
  Effect.provideService(tool.execute(args), ToolContext, context)

export const availability = (overrides: Partial<AvailabilityContext> = {}, flags: Partial<TurnFlags> = {}): AvailabilityContext => ({
  provider: "openai-compatible",
  model: "test-model",
  guildId: "guild-1",
  channelId: "channel-1",
  ...overrides,
  flags: { ...initialTurnFlags, ...flags }
})

/** The tool as dynamic assembly leaves it for this turn (`null` = hidden). */
export const assembled = (tool: Tool, context: AvailabilityContext) =>
  tool.assembleForContext === undefined
    ? Effect.succeed(tool)
    : tool.assembleForContext({ ...context, availableToolNames: new Set([tool.name]) })
