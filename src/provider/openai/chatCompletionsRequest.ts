import { Predicate } from "effect"
import type { ChatMessage } from "../../domain/ChatMessage"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, exchangesOf, toolImages, toolResultText } from "../toolReplay"

/** Options of the request body that differ between OpenAI-compatible servers. */
interface ChatCompletionsBodyOptions {
  /** `max_tokens` (most compatible servers) or `max_completion_tokens` (newer OpenAI models). */
  readonly maxTokensParameter: "max_tokens" | "max_completion_tokens"
  /** Sent only when set: some servers reject the field. */
  readonly parallelToolCalls: boolean | undefined
  readonly includeUsage: boolean
  /** Merged into the body last (OpenRouter `provider` routing, `reasoning` settings...). */
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
}

type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }

/** OpenAI allows `name` only as `^[a-zA-Z0-9_-]{1,64}$`; Discord display names are freer. */
const sanitizeName = (name: string | undefined): string | undefined => {
  if (name === undefined) return undefined
  const cleaned = name.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").replace(/[^a-zA-Z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 64)
  return cleaned.length > 0 ? cleaned : undefined
}

const messageOf = (message: ChatMessage): Record<string, unknown> => {
  const images = message.images ?? []
  const content: string | ReadonlyArray<ContentPart> = images.length > 0 && message.role === "user"
    ? [
      ...(message.content.length > 0 ? [{ type: "text" as const, text: message.content }] : []),
      ...images.map((image) => ({ type: "image_url" as const, image_url: { url: image.url } }))
    ]
    : message.content
  const name = message.role === "system" ? undefined : sanitizeName(message.name)
  return { role: message.role, content, ...(name === undefined ? {} : { name }) }
}

const isOpenRouterReasoning = (detail: unknown): boolean =>
  Predicate.isObject(detail) && typeof detail.type === "string" &&
  detail.type.startsWith("reasoning.")

/** Tool messages cannot carry images: one user-role message after the results carries those of every call. */
const imagesMessage = (entries: ReadonlyArray<ToolHistoryEntry>): Record<string, unknown> | undefined => {
  const content = entries.flatMap((entry) => {
    const images = toolImages(entry)
    return images.length === 0 ? [] : [
      { type: "text", text: `[Images returned by the ${entry.functionCall.name} tool]` },
      ...images.map((image) => ({ type: "image_url", image_url: { url: image.url } }))
    ]
  })
  return content.length === 0 ? undefined : { role: "user", content }
}

/**
 * Chat Completions body: the system prompt first, the context messages, then per exchange (the
 * calls one pass made) one assistant message (pre-tool text as its `content`, every call in
 * `tool_calls`, the reasoning fields DeepSeek and OpenRouter require back) and one `tool`
 * message per call, in order; then the prefill as a trailing assistant message the model continues.
 */
export const chatCompletionsBody = (request: GenerationRequest, options: ChatCompletionsBodyOptions) => {
  const messages: Array<Record<string, unknown>> = []
  if (request.system.trim().length > 0) messages.push({ role: "system", content: request.system })
  for (const message of request.messages) messages.push(messageOf(message))
  for (const exchange of exchangesOf(request.functionHistory, "call_")) {
    const calls = exchange.entries.map((entry) => entry.functionCall)
    // The pass's reasoning travels on its first call; gathered from every call all the same.
    const reasoningContent = calls.find((call) => call.reasoningContent !== undefined)?.reasoningContent
    const reasoningDetails = calls.flatMap((call) => (call.reasoningDetails ?? []).filter(isOpenRouterReasoning))
    messages.push({
      role: "assistant",
      content: exchange.preToolText ?? null,
      tool_calls: exchange.entries.map((entry, index) => ({
        id: exchange.ids[index],
        type: "function",
        function: { name: entry.functionCall.name, arguments: JSON.stringify(callArguments(entry)) }
      })),
      ...(reasoningContent === undefined ? {} : { reasoning_content: reasoningContent }),
      ...(reasoningDetails.length === 0 ? {} : { reasoning_details: reasoningDetails })
    })
    exchange.entries.forEach((entry, index) => {
      messages.push({ role: "tool", tool_call_id: exchange.ids[index], content: toolResultText(entry) })
    })
    const images = imagesMessage(exchange.entries)
    if (images !== undefined) messages.push(images)
  }
  if (request.assistantPrefill !== undefined && request.assistantPrefill.length > 0) {
    messages.push({ role: "assistant", content: request.assistantPrefill })
  }
  return {
    model: request.model,
    messages,
    stream: true,
    ...(options.includeUsage ? { stream_options: { include_usage: true } } : {}),
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxOutputTokens === undefined ? {} : { [options.maxTokensParameter]: request.maxOutputTokens }),
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.parameters }
      })),
      ...(options.parallelToolCalls === undefined ? {} : { parallel_tool_calls: options.parallelToolCalls })
    }),
    ...options.extraBody
  }
}
