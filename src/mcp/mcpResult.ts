import { Predicate } from "effect"
import { type ToolResult, toolFailure, toolSuccess } from "../domain/ToolResult"
import { measureJson } from "./jsonBounds"

/** What `callTool` answers, read loosely: servers differ in which optional parts they send. */
export interface McpCallOutput {
  readonly content?: ReadonlyArray<unknown>
  readonly structuredContent?: unknown
  readonly isError?: unknown
  /** Pre-2024-11 servers answer `{ toolResult }` instead of `content`. */
  readonly toolResult?: unknown
}

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** The text a content block contributes; media are named, not inlined (base64 is useless to the model). */
const blockText = (block: unknown): string | undefined => {
  if (!Predicate.isObject(block)) return undefined
  switch (block["type"]) {
    case "text":
      return str(block["text"])
    case "resource": {
      const resource = block["resource"]
      if (!Predicate.isObject(resource)) return undefined
      return str(resource["text"]) ?? `[resource ${str(resource["uri"]) ?? ""} (${str(resource["mimeType"]) ?? "binary"})]`
    }
    case "resource_link":
      return `[${str(block["name"]) ?? "resource"}: ${str(block["uri"]) ?? ""}]`
    case "image":
    case "audio":
      return `[${block["type"]} (${str(block["mimeType"]) ?? "unknown type"})]`
    default:
      return undefined
  }
}

/** The joined text of a result's content blocks. */
const joinedText = (output: McpCallOutput): string =>
  (output.content ?? []).flatMap((block) => {
    const text = blockText(block)
    return text === undefined || text === "" ? [] : [text]
  }).join("\n")

/** `MCP_RESULT_MAX_CHARS` default. */
const DEFAULT_RESULT_MAX_CHARS = 50_000

/** Structured content nested deeper than this is not serialized (it would overflow the stack). */
const STRUCTURED_MAX_DEPTH = 64

const cutMarker = (total: number, kept: number): string =>
  `\n[… cut: the MCP result had ${total} characters; only the first ${kept} are kept]`

/**
 * `text` within `maxChars` characters, the marker included: anything longer is cut and ends with a
 * marker saying so, never kept whole (docs/architecture.md, Bounds on untrusted tool servers).
 */
export const cutResultText = (text: string, maxChars: number): string => {
  if (text.length <= maxChars) return text
  let kept = Math.max(maxChars - cutMarker(text.length, maxChars).length, 0)
  // Never split a surrogate pair.
  const last = text.charCodeAt(kept - 1)
  if (kept > 0 && last >= 0xd800 && last <= 0xdbff) kept--
  return `${text.slice(0, kept)}${cutMarker(text.length, kept)}`
}

const jsonText = (value: unknown): string =>
  measureJson(value, { maxChars: Number.POSITIVE_INFINITY, maxDepth: STRUCTURED_MAX_DEPTH }).ok
    ? JSON.stringify(value)
    : `[structured content nested deeper than ${STRUCTURED_MAX_DEPTH} levels, not shown]`

/**
 * An MCP result as a tool result: `isError` ⇒ a failure carrying the joined text; success ⇒
 * `data.summary` with the joined text, or the JSON of `structuredContent` when there is no text.
 * Either is cut to `maxChars` (`MCP_RESULT_MAX_CHARS`).
 */
export const toToolResult = (toolName: string, output: McpCallOutput, maxChars: number = DEFAULT_RESULT_MAX_CHARS): ToolResult => {
  const text = joinedText(output)
  const cut = (value: string) => cutResultText(value, maxChars)
  if (output.isError === true) return toolFailure(cut(text || `MCP tool '${toolName}' reported an error without details`))
  if (text !== "") return toolSuccess({ summary: cut(text) })
  if (output.structuredContent !== undefined) return toolSuccess({ summary: cut(jsonText(output.structuredContent)) })
  if (output.toolResult !== undefined) return toolSuccess({ summary: cut(jsonText(output.toolResult)) })
  return toolSuccess({ summary: "" })
}
