import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Effect, Option, Ref } from "effect"
import { Predicate } from "effect"
import type { JsonSchemaObject } from "../domain/ToolDeclaration"
import type { McpTransportKind } from "./McpErrors"

/** A tool a server announced, with the name providers may use for it. */
export interface McpToolInfo {
  /** The name the server knows the tool by (sent in `tools/call`). */
  readonly mcpName: string
  /** Provider-safe name (`[A-Za-z0-9_-]{1,64}`): the MCP name with other characters replaced by `_`. */
  readonly declaredName: string
  readonly description: string
  readonly inputSchema: JsonSchemaObject
}

/** A connected, initialized MCP client and what it discovered. */
export interface McpSession {
  readonly server: string
  readonly transport: McpTransportKind
  readonly client: Client
  readonly tools: ReadonlyArray<McpToolInfo>
  /** Closes the client and its transport; never fails, safe to run twice. */
  readonly close: Effect.Effect<void>
  /** Why the connection was closed because a response stream broke (cap reached, server gone). */
  readonly streamFailure: Ref.Ref<Option.Option<string>>
  /** Removes the server URL's path and query from a text (error details) before anyone sees it. */
  readonly redact: (text: string) => string
}

/** Provider tool names must match `^[A-Za-z0-9_-]{1,64}$` (OpenAI, Anthropic, Gemini all agree on this subset). */
export const providerSafeName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "_"

/** An MCP `inputSchema` as a provider-ready object schema (missing `properties` filled in). */
export const normalizeInputSchema = (schema: unknown): JsonSchemaObject => {
  const source = Predicate.isObject(schema) ? schema : {}
  const { $schema: _dropped, ...rest } = source
  const properties = Predicate.isObject(rest["properties"]) ? rest["properties"] : {}
  const required = rest["required"]
  const { required: _required, ...withoutRequired } = rest
  return Array.isArray(required) && required.every((entry) => typeof entry === "string")
    ? { ...withoutRequired, type: "object", properties, required }
    : { ...withoutRequired, type: "object", properties }
}
