import type { ChatMessage } from "../../domain/ChatMessage"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, callId, preToolText, toolImages, toolResultText } from "../toolReplay"

/** Options of the `POST /responses` body. */
export interface ResponsesBodyOptions {
  /**
   * `store: false` (the default): OpenAI keeps nothing, so every pass sends the whole
   * conversation, reasoning included as encrypted items (`include: ["reasoning.encrypted_content"]`).
   */
  readonly store: boolean
  /** Ask for encrypted reasoning items so they can be replayed (reasoning models); default true. */
  readonly includeEncryptedReasoning: boolean
  /** Sent only when set. Only the first call of a pass runs anyway. */
  readonly parallelToolCalls: boolean | undefined
  /** Merged into the body last (`reasoning: {effort, summary}`, `service_tier`...). */
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
}

type InputItem = Readonly<Record<string, unknown>>

/** The Responses API has no `name` on input messages: a named user message says who spoke. */
const userText = (message: ChatMessage): string =>
  message.name !== undefined && message.name.length > 0 ? `${message.name}: ${message.content}` : message.content

const messageItem = (message: ChatMessage): InputItem | undefined => {
  if (message.role !== "user") {
    return message.content.trim().length === 0 ? undefined : { role: message.role, content: message.content }
  }
  const text = userText(message)
  const images = message.images ?? []
  if (images.length === 0) return text.trim().length === 0 ? undefined : { role: "user", content: text }
  return {
    role: "user",
    content: [
      ...(text.trim().length === 0 ? [] : [{ type: "input_text", text }]),
      ...images.map((image) => ({ type: "input_image", image_url: image.url, detail: "auto" }))
    ]
  }
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Reasoning items kept on a call (`reasoningDetails`) that can be sent back: only encrypted ones.
 * With `store: false` an item id alone refers to nothing, and an item without content has
 * nothing to give back.
 */
export const replayableReasoning = (details: ReadonlyArray<unknown> | undefined): ReadonlyArray<InputItem> =>
  (details ?? []).flatMap((detail) =>
    isRecord(detail) && detail.type === "reasoning" && typeof detail.encrypted_content === "string" &&
      detail.encrypted_content.length > 0
      ? [{
        type: "reasoning",
        ...(typeof detail.id === "string" ? { id: detail.id } : {}),
        summary: Array.isArray(detail.summary) ? detail.summary : [],
        encrypted_content: detail.encrypted_content
      }]
      : []
  )

/** One history entry: its reasoning, the pre-tool text, the call and its output (+ images the tool posted). */
const historyItems = (entry: ToolHistoryEntry, position: number): ReadonlyArray<InputItem> => {
  const id = callId(entry, position, "call_")
  const before = preToolText(entry)
  const images = toolImages(entry)
  return [
    ...replayableReasoning(entry.functionCall.reasoningDetails),
    ...(before === undefined ? [] : [{ role: "assistant", content: before }]),
    { type: "function_call", call_id: id, name: entry.functionCall.name, arguments: JSON.stringify(callArguments(entry)) },
    { type: "function_call_output", call_id: id, output: toolResultText(entry) },
    ...(images.length === 0 ? [] : [{
      role: "user",
      content: [
        { type: "input_text", text: `[Images returned by the ${entry.functionCall.name} tool]` },
        ...images.map((image) => ({ type: "input_image", image_url: image.url, detail: "auto" }))
      ]
    }])
  ]
}

/**
 * `POST /responses` body: the system prompt as `instructions`, the context messages, then per
 * tool history entry its encrypted reasoning items, the pre-tool text as an assistant message,
 * the `function_call` and its `function_call_output`; then the prefill as a trailing assistant
 * message the model continues.
 */
export const responsesBody = (request: GenerationRequest, options: ResponsesBodyOptions) => {
  const input: Array<InputItem> = []
  for (const message of request.messages) {
    const item = messageItem(message)
    if (item !== undefined) input.push(item)
  }
  request.functionHistory.forEach((entry, position) => input.push(...historyItems(entry, position)))
  if (request.assistantPrefill !== undefined && request.assistantPrefill.trim().length > 0) {
    input.push({ role: "assistant", content: request.assistantPrefill })
  }
  return {
    model: request.model,
    ...(request.system.trim().length === 0 ? {} : { instructions: request.system }),
    input,
    stream: true,
    store: options.store,
    ...(options.includeEncryptedReasoning ? { include: ["reasoning.encrypted_content"] } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxOutputTokens === undefined ? {} : { max_output_tokens: request.maxOutputTokens }),
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        // Tool schemas come from MCP servers too: strict mode would reject most of them.
        strict: false
      })),
      ...(options.parallelToolCalls === undefined ? {} : { parallel_tool_calls: options.parallelToolCalls })
    }),
    ...options.extraBody
  }
}
