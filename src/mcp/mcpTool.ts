import type { Effect } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { ToolResult } from "../domain/ToolResult"
import type { Tool } from "../tools/Tool"
import type { ToolContext } from "../tools/ToolContext"
import type { ToolError } from "../tools/ToolError"
import type { McpToolInfo } from "./McpSession"

/**
 * An MCP tool as a loopcord Tool: declared under its provider-safe name, always followed by another
 * pass (MCP output reaches the user only through the model).
 */
export const makeMcpTool = (spec: {
  readonly info: McpToolInfo
  readonly scope: "global" | "guild"
  readonly server: string
  readonly execute: (args: ToolArgs) => Effect.Effect<ToolResult, ToolError, ToolContext>
}): Tool => ({
  name: spec.info.declaredName,
  description: spec.info.description.trim() || `Tool '${spec.info.mcpName}' of the MCP server '${spec.server}'.`,
  category: "mcp",
  parameters: spec.info.inputSchema,
  source: { kind: "mcp", scope: spec.scope, server: spec.server },
  execute: spec.execute,
  isAvailableFor: () => true,
  requiresFollowUp: true
})
