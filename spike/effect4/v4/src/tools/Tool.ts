import { Effect, Schema, SchemaAST } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { JsonSchemaObject, ToolDeclaration } from "../domain/ToolDeclaration"
import { toolFailure, type ToolResult } from "../domain/ToolResult"
import type { ToolContext } from "./ToolContext"
import type { ToolError } from "./ToolError"
import type { TurnFlags, TurnState } from "./TurnState"

export type ToolCategory = "discord" | "search" | "memory" | "utility" | "mcp"

/** Where a tool comes from; MCP tools always require a follow-up pass. */
export type ToolSource =
  | { readonly kind: "builtin" }
  | { readonly kind: "mcp"; readonly scope: "global" | "guild"; readonly server: string }

/** Live turn facts an availability check may read. */
export interface AvailabilityContext {
  readonly provider: string
  readonly model: string
  readonly guildId: string | undefined
  readonly channelId: string
  readonly flags: TurnFlags
  readonly turnState?: TurnState | undefined
}

export interface AssemblyContext extends AvailabilityContext {
  readonly availableToolNames: ReadonlySet<string>
}

/** The tool contract. `execute` receives arguments already validated against `parameters`. */
export interface Tool {
  readonly name: string
  readonly description: string
  readonly category: ToolCategory
  readonly parameters: JsonSchemaObject
  readonly source: ToolSource
  readonly execute: (args: ToolArgs) => Effect.Effect<ToolResult, ToolError, ToolContext>
  readonly isAvailableFor: (provider: string) => boolean
  readonly isAvailableForContext?: (context: AvailabilityContext) => boolean
  readonly assembleForContext?: (context: AssemblyContext) => Effect.Effect<Tool | null, unknown>
  readonly requiresFollowUp?: boolean
  readonly triggerPatterns?: ReadonlyArray<RegExp>
}

export const toDeclaration = (tool: Tool): ToolDeclaration => ({
  name: tool.name,
  description: tool.description,
  parameters: tool.parameters
})

/**
 * The JSON Schema of a Schema struct, as providers expect it (always `properties` and
 * `required`). v3 `JSONSchema.make(schema)` → v4 `Schema.toJsonSchemaDocument(schema).schema`
 * (draft 2020-12, `$defs` apart in `definitions`, no `$schema` key on the schema itself).
 */
export const jsonSchemaOf = (schema: Schema.Top): JsonSchemaObject => {
  if (isEmptyStruct(schema.ast)) return { type: "object", properties: {}, required: [] }
  const rest: Record<string, unknown> = { ...Schema.toJsonSchemaDocument(schema).schema }
  if (rest["type"] !== "object") {
    throw new TypeError("Tool parameters must be a Schema.Struct (a JSON object schema)")
  }
  return { properties: {}, required: [], ...rest, type: "object" }
}

// v3 SchemaAST.isTypeLiteral → v4 SchemaAST.isObjects (same two lists).
const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isObjects(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

/**
 * Builds a built-in tool from a Schema: the declaration is derived from the schema and arguments
 * are decoded before `execute`, so bad input becomes a clear failed result.
 */
export const makeTool = <A>(spec: {
  readonly name: string
  readonly description: string
  readonly category: ToolCategory
  // v3 Schema.Schema<A, I, never> → v4 Schema.Decoder<A> (no decoding services).
  readonly parameters: Schema.Decoder<A>
  readonly execute: (args: A) => Effect.Effect<ToolResult, ToolError, ToolContext>
  readonly isAvailableFor?: (provider: string) => boolean
  readonly isAvailableForContext?: (context: AvailabilityContext) => boolean
  readonly assembleForContext?: (context: AssemblyContext) => Effect.Effect<Tool | null, unknown>
  readonly requiresFollowUp?: boolean
  readonly triggerPatterns?: ReadonlyArray<RegExp>
}): Tool => {
  // v3 Schema.decodeUnknown → v4 Schema.decodeUnknownEffect (fails with a SchemaError, not a ParseError).
  const decode = Schema.decodeUnknownEffect(spec.parameters, { errors: "all", onExcessProperty: "ignore" })
  const { parameters, execute, isAvailableFor, ...rest } = spec
  return {
    ...rest,
    parameters: jsonSchemaOf(parameters),
    source: { kind: "builtin" },
    isAvailableFor: isAvailableFor ?? (() => true),
    execute: (args) =>
      decode(args).pipe(
        Effect.matchEffect({
          // v3 ParseResult.TreeFormatter.formatErrorSync(error) → v4 the SchemaError's message (the default formatter).
          onFailure: (error) => Effect.succeed(toolFailure(`Invalid arguments for ${spec.name}: ${error.message}`)),
          onSuccess: execute
        })
      )
  }
}
