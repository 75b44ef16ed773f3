import { type ToolResult, toolFailure, toolSuccess } from "../domain/ToolResult"

/** What `callTool` answers, read loosely: servers differ in which optional parts they send. */
export interface McpCallOutput {
  readonly content?: ReadonlyArray<unknown>
  readonly structuredContent?: unknown
  readonly isError?: unknown
  /** Pre-2024-11 servers answer `{ toolResult }` instead of `content`. */
  readonly toolResult?: unknown
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined)

/** The text a content block contributes; media are named, not inlined (base64 is useless to the model). */
const blockText = (block: unknown): string | undefined => {
  if (!isRecord(block)) return undefined
  switch (block["type"]) {
    case "text":
      return str(block["text"])
    case "resource": {
      const resource = block["resource"]
      if (!isRecord(resource)) return undefined
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
export const joinedText = (output: McpCallOutput): string =>
  (output.content ?? []).flatMap((block) => {
    const text = blockText(block)
    return text === undefined || text === "" ? [] : [text]
  }).join("\n")

/**
 * Spec §6.5: `isError` ⇒ a failure carrying the joined text; success ⇒ `data.summary` with the
 * joined text, or the JSON of `structuredContent` when there is no text.
 */
export const toToolResult = (toolName: string, output: McpCallOutput): ToolResult => {
  const text = joinedText(output)
  if (output.isError === true) return toolFailure(text || `MCP tool '${toolName}' reported an error without details`)
  if (text !== "") return toolSuccess({ summary: text })
  if (output.structuredContent !== undefined) return toolSuccess({ summary: JSON.stringify(output.structuredContent) })
  if (output.toolResult !== undefined) return toolSuccess({ summary: JSON.stringify(output.toolResult) })
  return toolSuccess({ summary: "" })
}
