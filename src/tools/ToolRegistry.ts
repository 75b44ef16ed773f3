import { Context, Data, type Effect, type Option } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { ToolResult } from "../domain/ToolResult"
import type { AvailabilityContext, Tool } from "./Tool"
import type { ToolContext } from "./ToolContext"

/** A registration was refused: duplicate name, invalid definition, alias to nothing. */
export class ToolRegistrationError extends Data.TaggedError("ToolRegistrationError")<{
  readonly tool: string
  readonly reason: "duplicate" | "invalid" | "unknown_alias_target"
  readonly detail: string
}> {
  override get message(): string {
    return `Cannot register tool '${this.tool}': ${this.detail}`
  }
}

/** One dispatch, kept in a bounded history (max 1000, trimmed to the last 900). */
export interface ToolExecutionRecord {
  readonly name: string
  readonly args: ToolArgs
  readonly success: boolean
  readonly error: string | undefined
  readonly durationMs: number
  readonly at: number
}

/**
 * Every tool the bot can call (spec §6.1): built-ins and global MCP tools are registered here;
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
   * their replacements, then dynamic assembly (spec §6.2–§6.4).
   */
  readonly toolsForTurn: (context: AvailabilityContext) => Effect.Effect<ReadonlyArray<Tool>>
  readonly requiresFollowUp: (name: string, provider: string, guildId: string | undefined) => Effect.Effect<boolean>
  /**
   * Dispatch by name with the two availability gates (spec §3 step 6, §6.2). Never fails:
   * unknown tools, gate rejections, ToolErrors and defects become failed results.
   */
  readonly execute: (name: string, args: ToolArgs) => Effect.Effect<ToolResult, never, ToolContext>
  /** Most recent first. */
  readonly executionHistory: (limit?: number) => Effect.Effect<ReadonlyArray<ToolExecutionRecord>>
}

export class ToolRegistry extends Context.Tag("loopcord/tools/ToolRegistry")<ToolRegistry, ToolRegistryShape>() {}
