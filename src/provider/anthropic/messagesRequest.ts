import { Predicate } from "effect"
import type { ChatMessage, ImageRef } from "../../domain/ChatMessage"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, exchangesOf, toolImages, toolResultText } from "../toolReplay"

type Block = Readonly<Record<string, unknown>>

interface Turn {
  readonly role: "user" | "assistant"
  readonly content: Array<Block>
}

/** `data:` URLs go inline as base64; anything else by URL. */
const imageBlock = (image: ImageRef): Block => {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(image.url)
  return inline === null
    ? { type: "image", source: { type: "url", url: image.url } }
    : { type: "image", source: { type: "base64", media_type: inline[1], data: inline[2] } }
}

const textBlock = (text: string): Block => ({ type: "text", text })

/** Anthropic has no `name` field: a named user message says who spoke in its text. */
const contentOf = (message: ChatMessage): Array<Block> => {
  const text = message.role === "user" && message.name !== undefined && message.name.length > 0
    ? `${message.name}: ${message.content}`
    : message.content
  return [
    ...(text.trim().length > 0 ? [textBlock(text)] : []),
    ...(message.role === "user" ? (message.images ?? []).map(imageBlock) : [])
  ]
}

const isThinkingBlock = (detail: unknown): detail is Block =>
  Predicate.isObject(detail) &&
  (detail.type === "thinking" || detail.type === "redacted_thinking")

/** Consecutive turns of one role become one message (the API merges them anyway; empty ones are dropped). */
const pushTurn = (turns: Array<Turn>, role: Turn["role"], content: ReadonlyArray<Block>) => {
  if (content.length === 0) return
  const last = turns[turns.length - 1]
  if (last !== undefined && last.role === role) last.content.push(...content)
  else turns.push({ role, content: [...content] })
}

interface MessagesBodyOptions {
  /** Used when the request sets no `maxOutputTokens` (the API requires one). */
  readonly defaultMaxTokens: number
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
}

/**
 * Messages body: context turns (system-role items become user text), then per exchange (the
 * calls one pass made) one assistant turn (thinking blocks to replay, pre-tool text, a `tool_use`
 * per call) and one user turn holding every `tool_result` in order (+ images the tools posted):
 * Anthropic wants all results of a turn in the next user message. Then the prefill as a trailing
 * assistant turn, which Anthropic continues natively.
 */
export const messagesBody = (request: GenerationRequest, options: MessagesBodyOptions) => {
  const turns: Array<Turn> = []
  for (const message of request.messages) {
    pushTurn(turns, message.role === "assistant" ? "assistant" : "user", contentOf(message))
  }
  for (const exchange of exchangesOf(request.functionHistory, "toolu_loopcord_")) {
    const before = exchange.preToolText
    pushTurn(turns, "assistant", [
      // The pass's thinking travels on its first call; gathered from every call all the same.
      ...exchange.entries.flatMap((entry) => (entry.functionCall.reasoningDetails ?? []).filter(isThinkingBlock)),
      ...(before === undefined ? [] : [textBlock(before)]),
      ...exchange.entries.map((entry, index) => ({
        type: "tool_use",
        id: exchange.ids[index],
        name: entry.functionCall.name,
        input: callArguments(entry)
      }))
    ])
    pushTurn(turns, "user", exchange.entries.map((entry, index) => {
      const images = toolImages(entry)
      return {
        type: "tool_result",
        tool_use_id: exchange.ids[index],
        content: images.length === 0
          ? toolResultText(entry)
          : [textBlock(toolResultText(entry)), ...images.map((image) => imageBlock(image))]
      }
    }))
  }
  // The API refuses a final assistant turn that ends with whitespace.
  const prefill = request.assistantPrefill?.trimEnd() ?? ""
  if (prefill.length > 0) pushTurn(turns, "assistant", [textBlock(prefill)])
  return {
    model: request.model,
    max_tokens: request.maxOutputTokens ?? options.defaultMaxTokens,
    stream: true,
    ...(request.system.trim().length === 0 ? {} : { system: request.system }),
    messages: turns,
    // Anthropic's range is 0–1; a shared setting made for OpenAI (0–2) must not fail every call.
    ...(request.temperature === undefined ? {} : { temperature: Math.min(1, Math.max(0, request.temperature)) }),
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters }))
    }),
    ...options.extraBody
  }
}
