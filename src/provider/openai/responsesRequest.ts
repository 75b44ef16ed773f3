import { Predicate } from "effect"
import type { ChatMessage } from "../../domain/ChatMessage"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, exchangesOf, type ReplayExchange, toolImages, toolResultText } from "../toolReplay"

/** Options of the `POST /responses` body. */
interface ResponsesBodyOptions {
  /**
   * `store: false` (the default): OpenAI keeps nothing, so every pass sends the whole
   * conversation, reasoning included as encrypted items (`include: ["reasoning.encrypted_content"]`).
   */
  readonly store: boolean
  /** Ask for encrypted reasoning items so they can be replayed (reasoning models); default true. */
  readonly includeEncryptedReasoning: boolean
  /** Sent only when set. */
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

/**
 * Reasoning items kept on a call (`reasoningDetails`) that can be sent back: only encrypted ones.
 * With `store: false` an item id alone refers to nothing, and an item without content has
 * nothing to give back.
 */
const replayableReasoning = (details: ReadonlyArray<unknown> | undefined): ReadonlyArray<InputItem> =>
  (details ?? []).flatMap((detail) =>
    Predicate.isObject(detail) && detail.type === "reasoning" && typeof detail.encrypted_content === "string" &&
      detail.encrypted_content.length > 0
      ? [{
        type: "reasoning",
        ...(typeof detail.id === "string" ? { id: detail.id } : {}),
        summary: Array.isArray(detail.summary) ? detail.summary : [],
        encrypted_content: detail.encrypted_content
      }]
      : []
  )

/**
 * One exchange (the calls one pass made): its reasoning, the pre-tool text, every `function_call`,
 * then every `function_call_output` in the same order (+ images the tools posted).
 */
const exchangeItems = (exchange: ReplayExchange): ReadonlyArray<InputItem> => {
  const images = exchange.entries.flatMap((entry) => {
    const posted = toolImages(entry)
    return posted.length === 0 ? [] : [
      { type: "input_text", text: `[Images returned by the ${entry.functionCall.name} tool]` },
      ...posted.map((image) => ({ type: "input_image", image_url: image.url, detail: "auto" }))
    ]
  })
  return [
    // The pass's reasoning travels on its first call; gathered from every call all the same.
    ...exchange.entries.flatMap((entry) => replayableReasoning(entry.functionCall.reasoningDetails)),
    ...(exchange.preToolText === undefined ? [] : [{ role: "assistant", content: exchange.preToolText }]),
    ...exchange.entries.map((entry, index) => ({
      type: "function_call",
      call_id: exchange.ids[index],
      name: entry.functionCall.name,
      arguments: JSON.stringify(callArguments(entry))
    })),
    ...exchange.entries.map((entry, index) => ({ type: "function_call_output", call_id: exchange.ids[index], output: toolResultText(entry) })),
    ...(images.length === 0 ? [] : [{ role: "user", content: images }])
  ]
}

/**
 * `POST /responses` body: the system prompt as `instructions`, the context messages, then per
 * exchange its encrypted reasoning items, the pre-tool text as an assistant message, the
 * `function_call` items and their `function_call_output` items; then the prefill as a trailing
 * assistant message the model continues.
 */
export const responsesBody = (request: GenerationRequest, options: ResponsesBodyOptions) => {
  const input: Array<InputItem> = []
  for (const message of request.messages) {
    const item = messageItem(message)
    if (item !== undefined) input.push(item)
  }
  for (const exchange of exchangesOf(request.functionHistory, "call_")) input.push(...exchangeItems(exchange))
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
