import { Effect, Layer } from "effect"
import * as Stores from "../../../../src/store/Stores"
import type { AvailabilityContext, Tool } from "../../../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../../../src/tools/ToolContext"
import { initialTurnFlags, type TurnFlags } from "../../../../src/tools/TurnState"
import { testToolContext } from "../../../support/tools/testToolContext"

/**
 * Helpers for the Discord-side tool tests (memory, stickers, blocking): real stores over a fresh
 * SQLite `:memory:` database, and a ToolContext for calling a tool directly.
 */
export const memoryStores = Layer.fresh(Stores.layerMemory)

export const toolContext = (overrides: Partial<ToolContextShape> = {}): Effect.Effect<ToolContextShape> =>
  Effect.map(testToolContext({ persona: { id: "persona-1", name: "Loopcord", avatarUrl: undefined, systemPrompt: "You are Loopcord." }, ...overrides }), ({ context }) => context)

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
