import { Effect, Schema, SchemaAST } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { JsonSchemaObject, ToolDeclaration } from "../domain/ToolDeclaration"
import { toolFailure, type ToolResult } from "../domain/ToolResult"
import { formatArgumentIssue } from "./argumentIssues"
import { providerJsonSchema } from "./providerJsonSchema"
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
export const jsonSchemaOf = (schema: Schema.Top): JsonSchemaObject => {
  // An empty struct accepts "anything but null" to the schema library; a tool without parameters is an empty object.
  if (isEmptyStruct(schema.ast)) {
    return { type: "object", properties: {}, required: [] }
  }
  const rest = providerJsonSchema(schema)
  if (rest["type"] !== "object") {
    throw new TypeError("Tool parameters must be a Schema.Struct (a JSON object schema)")
  }
  return { properties: {}, required: [], ...rest, type: "object" }
}

const isEmptyStruct = (ast: SchemaAST.AST): boolean =>
  SchemaAST.isObjects(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0

/** Every problem at once, extra keys ignored (models add some), the input named in the message. */
const DECODE_OPTIONS = { errors: "all", onExcessProperty: "ignore", reportInput: true } as const

/**
 * Builds a built-in tool from an effect Schema: the declaration is derived from the schema and
 * arguments are decoded before `execute`, so bad input becomes a clear failed result.
 */
export const makeTool = <A>(spec: {
  readonly name: string
  readonly description: string
  readonly category: ToolCategory
  readonly parameters: Schema.Decoder<A>
  readonly execute: (args: A) => Effect.Effect<ToolResult, ToolError, ToolContext>
  readonly isAvailableFor?: (provider: string) => boolean
  readonly isAvailableForContext?: (context: AvailabilityContext) => boolean
  readonly assembleForContext?: (context: AssemblyContext) => Effect.Effect<Tool | null, unknown>
  readonly requiresFollowUp?: boolean
  readonly triggerPatterns?: ReadonlyArray<RegExp>
} & ToolCapabilities): Tool => {
  const decode = Schema.decodeUnknownEffect(spec.parameters)
  const { parameters, execute, isAvailableFor, ...rest } = spec
  return {
    ...rest,
    parameters: jsonSchemaOf(parameters),
    source: { kind: "builtin" },
    isAvailableFor: isAvailableFor ?? (() => true),
    execute: (args) =>
      decode(args, DECODE_OPTIONS).pipe(
        Effect.matchEffect({
          onFailure: (error) =>
            Effect.succeed(toolFailure(`Invalid arguments for ${spec.name}: ${formatArgumentIssue(error.issue)}`)),
          onSuccess: execute
        })
      )
  }
}
