import { Effect, JSONSchema, ParseResult, Schema, SchemaAST } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { JsonSchemaObject, ToolDeclaration } from "../domain/ToolDeclaration"
import { toolFailure, type ToolResult } from "../domain/ToolResult"
import type { ToolCapabilities } from "./ToolCapabilities"
import type { ToolContext } from "./ToolContext"
import type { ToolError } from "./ToolError"
import type { TurnFlags, TurnState } from "./TurnState"

export type ToolCategory = "discord" | "search" | "memory" | "utility" | "mcp"

/** Where a tool comes from; MCP tools always require a follow-up pass (their output reaches the user only through one). */
export type ToolSource =
  | { readonly kind: "builtin" }
  | { readonly kind: "mcp"; readonly scope: "global" | "guild"; readonly server: string }

/** Live turn facts an availability check may read (never the Discord objects). */
export interface AvailabilityContext {
  readonly provider: string
  readonly model: string
  readonly guildId: string | undefined
  readonly channelId: string
  readonly flags: TurnFlags
  /** The turn's state, when the caller has one: the registry keeps the turn's guild tools there. */
  readonly turnState?: TurnState | undefined
}

/** What dynamic assembly sees: the turn plus every tool name that survived filtering. */
export interface AssemblyContext extends AvailabilityContext {
  readonly availableToolNames: ReadonlySet<string>
}

/**
 * The tool contract (docs/architecture.md, Tool availability and assembly). `execute` receives arguments already validated against
 * `parameters`; a failure is a ToolError (turned into a failed result for the model).
 */
export interface Tool extends ToolCapabilities {
  readonly name: string
  readonly description: string
  readonly category: ToolCategory
  readonly parameters: JsonSchemaObject
  readonly source: ToolSource
  readonly execute: (args: ToolArgs) => Effect.Effect<ToolResult, ToolError, ToolContext>
  /** Static provider support. */
  readonly isAvailableFor: (provider: string) => boolean
  /** Live turn state (per-turn dedup, model capability, configured slots). */
  readonly isAvailableForContext?: (context: AvailabilityContext) => boolean
  /** A per-turn variant, `null` to hide the tool; a failure omits the tool for the turn. */
  readonly assembleForContext?: (context: AssemblyContext) => Effect.Effect<Tool | null, unknown>
  readonly requiresFollowUp?: boolean
  /** Phrases that make deliberate tool mode expose this tool. */
  readonly triggerPatterns?: ReadonlyArray<RegExp>
}

export const toDeclaration = (tool: Tool): ToolDeclaration => ({
  name: tool.name,
  description: tool.description,
  parameters: tool.parameters
})

/**
 * The JSON Schema of an effect Schema struct, as providers expect it (no `$schema` key, always
 * `properties` and `required`: some providers reject an object schema without them).
 */
export const jsonSchemaOf = <A, I>(schema: Schema.Schema<A, I, never>): JsonSchemaObject => {
  // JSONSchema renders an empty struct as "object or array"; a tool without parameters is an empty object.
  if (isEmptyStruct(schema.ast)) {
    return { type: "object", properties: {}, required: [] }
  }
  const { $schema: _ignored, ...rest }: Record<string, unknown> = { ...JSONSchema.make(schema) }
  if (rest["type"] !== "object") {
    throw new TypeError("Tool parameters must be a Schema.Struct (a JSON object schema)")
  }
  return { properties: {}, required: [], ...rest, type: "object" }
}

const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

/**
 * Builds a built-in tool from an effect Schema: the declaration is derived from the schema and
 * arguments are decoded before `execute`, so bad input becomes a clear failed result.
 */
export const makeTool = <A, I>(spec: {
  readonly name: string
  readonly description: string
  readonly category: ToolCategory
  readonly parameters: Schema.Schema<A, I, never>
  readonly execute: (args: A) => Effect.Effect<ToolResult, ToolError, ToolContext>
  readonly isAvailableFor?: (provider: string) => boolean
  readonly isAvailableForContext?: (context: AvailabilityContext) => boolean
  readonly assembleForContext?: (context: AssemblyContext) => Effect.Effect<Tool | null, unknown>
  readonly requiresFollowUp?: boolean
  readonly triggerPatterns?: ReadonlyArray<RegExp>
} & ToolCapabilities): Tool => {
  const decode = Schema.decodeUnknown(spec.parameters, { errors: "all", onExcessProperty: "ignore" })
  const { parameters, execute, isAvailableFor, ...rest } = spec
  return {
    ...rest,
    parameters: jsonSchemaOf(parameters),
    source: { kind: "builtin" },
    isAvailableFor: isAvailableFor ?? (() => true),
    execute: (args) =>
      decode(args).pipe(
        Effect.matchEffect({
          onFailure: (error) =>
            Effect.succeed(
              toolFailure(`Invalid arguments for ${spec.name}: ${ParseResult.TreeFormatter.formatErrorSync(error)}`)
            ),
          onSuccess: execute
        })
      )
  }
}
