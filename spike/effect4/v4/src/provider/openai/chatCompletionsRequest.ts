// Copied from src/provider/openai/chatCompletionsRequest.ts unchanged (it uses no Effect API), but for comments that cited documents outside the repository.
import type { ChatMessage } from "../../domain/ChatMessage"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, callId, preToolText, toolImages, toolResultText } from "../toolReplay"

/** Options of the request body that differ between OpenAI-compatible servers. */
export interface ChatCompletionsBodyOptions {
  /** `max_tokens` (most compatible servers) or `max_completion_tokens` (newer OpenAI models). */
  readonly maxTokensParameter: "max_tokens" | "max_completion_tokens"
  /** Sent only when set: some servers reject the field. Only the first call of a pass runs anyway. */
  readonly parallelToolCalls: boolean | undefined
  readonly includeUsage: boolean
  /** Merged into the body last (OpenRouter `provider` routing, `reasoning` settings...). */
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
}

type ContentPart =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }

/** OpenAI allows `name` only as `^[a-zA-Z0-9_-]{1,64}$`; Discord display names are freer. */
export const sanitizeName = (name: string | undefined): string | undefined => {
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
  typeof detail === "object" && detail !== null && "type" in detail && typeof detail.type === "string" &&
  detail.type.startsWith("reasoning.")

/**
 * Chat Completions body: the system prompt first, the context messages, then per tool history
 * entry the assistant turn (pre-tool text merged into its `content`, the call, the reasoning
 * fields DeepSeek and OpenRouter require back) and the `tool` message, then the prefill as a
 * trailing assistant message the model continues.
 */
export const chatCompletionsBody = (request: GenerationRequest, options: ChatCompletionsBodyOptions) => {
  const messages: Array<Record<string, unknown>> = []
  if (request.system.trim().length > 0) messages.push({ role: "system", content: request.system })
  for (const message of request.messages) messages.push(messageOf(message))
  request.functionHistory.forEach((entry, position) => {
    const id = callId(entry, position, "call_")
    const call = entry.functionCall
    const reasoningDetails = (call.reasoningDetails ?? []).filter(isOpenRouterReasoning)
    messages.push({
      role: "assistant",
      content: preToolText(entry) ?? null,
      tool_calls: [{ id, type: "function", function: { name: call.name, arguments: JSON.stringify(callArguments(entry)) } }],
      ...(call.reasoningContent === undefined ? {} : { reasoning_content: call.reasoningContent }),
      ...(reasoningDetails.length === 0 ? {} : { reasoning_details: reasoningDetails })
    })
    messages.push({ role: "tool", tool_call_id: id, content: toolResultText(entry) })
    const images = toolImages(entry)
    if (images.length > 0) {
      // Tool messages cannot carry images: a user-role message carries them right after.
      messages.push({
        role: "user",
        content: [
          { type: "text", text: `[Images returned by the ${call.name} tool]` },
          ...images.map((image) => ({ type: "image_url", image_url: { url: image.url } }))
        ]
      })
    }
  })
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
