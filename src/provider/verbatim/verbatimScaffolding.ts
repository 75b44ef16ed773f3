import { ChatMessage } from "../../domain/ChatMessage"
import type { ToolDeclaration } from "../../domain/ToolDeclaration"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, exchangesOf, toolResultText } from "../toolReplay"

/**
 * What a verbatim-mode request looks like (docs/architecture.md, "Verbatim tool calls"): no
 * native `tools`; a schema dump of the tools before the first dialogue item and a short nudge
 * three dialogue items from the end; past calls replayed as the text the model writes
 * (`name({...})`) and results as user-role notes, so a model without native tool support sees
 * one consistent format. The calls one pass made are one assistant message (one call a line),
 * and their results one user message, in the same order.
 */

/** How many dialogue items from the end the nudge goes (`VERBATIM_TOOL_CALLING_CONTEXT_DEPTH`). */
const nudgeDepth = 3

const formatCall = (name: string, args: Readonly<Record<string, unknown>>): string =>
  `\`${name}(${JSON.stringify(args)})\``

const schemaDump = (tools: ReadonlyArray<ToolDeclaration>): string =>
  [
    "[System: Tools you can call]",
    "To call a tool, write the call in your reply as `tool_name({\"param\": \"value\"})`: the tool name, then",
    "its arguments as one JSON object in parentheses, inside backticks. A tool with exactly one required text",
    "parameter also accepts `tool_name(\"text\")`; a tool with no required parameters accepts `tool_name()`.",
    "You may write a short sentence before the call. When several calls are needed at once, write them one",
    "after another, one a line; stop right after the last call: the results are given to you in the next",
    "message, then you continue.",
    "",
    "Available tools (JSON Schema of the arguments):",
    ...tools.map((tool) => `- ${tool.name}: ${tool.description}\n  arguments: ${JSON.stringify(tool.parameters)}`)
  ].join("\n")

export const nudge =
  "[System: To use a tool, write the call as `tool_name({...JSON arguments...})` and stop; do not describe the call instead of making it.]"

const resultNote = (entry: ToolHistoryEntry): string => `[System: Result of ${entry.functionCall.name}]\n${toolResultText(entry)}`

const historyMessages = (request: GenerationRequest): ReadonlyArray<ChatMessage> =>
  exchangesOf(request.functionHistory).flatMap((exchange) => {
    const calls = exchange.entries.map((entry) => formatCall(entry.functionCall.name, callArguments(entry))).join("\n")
    return [
      ChatMessage({ role: "assistant", content: exchange.preToolText === undefined ? calls : `${exchange.preToolText}\n${calls}` }),
      ChatMessage({ role: "user", content: exchange.entries.map(resultNote).join("\n\n") })
    ]
  })

/** The request as sent in verbatim mode; unchanged when it offers no tools. */
export const withVerbatimScaffolding = (request: GenerationRequest): GenerationRequest => {
  if (request.tools.length === 0) return request
  const dialogue = [...request.messages]
  dialogue.splice(Math.max(0, dialogue.length - nudgeDepth), 0, ChatMessage({ role: "system", content: nudge }))
  return {
    ...request,
    tools: [],
    functionHistory: [],
    messages: [ChatMessage({ role: "system", content: schemaDump(request.tools) }), ...dialogue, ...historyMessages(request)]
  }
}
