import type { ChatMessage, ImageRef } from "../../domain/ChatMessage"
import type { ToolHistoryEntry } from "../../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../GenerationRequest"
import { callArguments, exchangesOf, toolImages, toolResultValue } from "../toolReplay"

type Part = Readonly<Record<string, unknown>>

interface Content {
  readonly role: "user" | "model"
  readonly parts: Array<Part>
}

/**
 * Google's documented placeholder for a function call whose signature was never issued (a call
 * made by another provider before a fallback to Gemini): Gemini 3 rejects unsigned calls.
 */
export const missingSignaturePlaceholder = "skip_thought_signature_validator"

/** `data:` URLs go inline; other URLs as `fileData` (Gemini fetches the ones it is allowed to). */
const imagePart = (image: ImageRef): Part => {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(image.url)
  return inline === null
    ? { fileData: { mimeType: image.mimeType ?? "image/png", fileUri: image.url } }
    : { inlineData: { mimeType: inline[1], data: inline[2] } }
}

/** Gemini has no author name field: a named user message says who spoke in its text. */
const partsOf = (message: ChatMessage): Array<Part> => {
  const text = message.role === "user" && message.name !== undefined && message.name.length > 0
    ? `${message.name}: ${message.content}`
    : message.content
  return [
    ...(text.length > 0 ? [{ text }] : []),
    ...(message.role === "user" ? (message.images ?? []).map(imagePart) : [])
  ]
}

const pushContent = (contents: Array<Content>, role: Content["role"], parts: ReadonlyArray<Part>) => {
  if (parts.length === 0) return
  const last = contents[contents.length - 1]
  if (last !== undefined && last.role === role) last.parts.push(...parts)
  else contents.push({ role, parts: [...parts] })
}

interface GeminiBodyOptions {
  readonly extraBody: Readonly<Record<string, unknown>> | undefined
}

/**
 * The `functionCall` parts of one exchange. A call keeps the signature Gemini put on its part;
 * of parallel calls Gemini signs only the first, so the others go without. An exchange no
 * Gemini model signed (calls made by another provider before a fallback) carries the
 * placeholder on its first call, where Gemini 3 checks for one.
 */
const functionCallParts = (entries: ReadonlyArray<ToolHistoryEntry>): ReadonlyArray<Part> => {
  const signed = entries.some((entry) => entry.functionCall.thoughtSignature !== undefined)
  return entries.map((entry, index) => {
    const call = entry.functionCall
    const signature = call.thoughtSignature ?? (!signed && index === 0 ? missingSignaturePlaceholder : undefined)
    return {
      functionCall: { name: call.name, args: callArguments(entry), ...(call.id === undefined ? {} : { id: call.id }) },
      ...(signature === undefined ? {} : { thoughtSignature: signature })
    }
  })
}

/**
 * `streamGenerateContent` body: context turns (system-role items become user text), then per
 * exchange (the calls one pass made) one model turn (pre-tool text, a `functionCall` part per
 * call with its `thoughtSignature`) and one user turn with the `functionResponse` parts in the
 * same order (+ images the tools posted), then the prefill as a trailing model turn. Tool schemas
 * go as `parametersJsonSchema` (full JSON Schema, so MCP schemas with `additionalProperties` or
 * `$schema` are accepted).
 */
export const geminiBody = (request: GenerationRequest, options: GeminiBodyOptions) => {
  const contents: Array<Content> = []
  for (const message of request.messages) {
    pushContent(contents, message.role === "assistant" ? "model" : "user", partsOf(message))
  }
  for (const exchange of exchangesOf(request.functionHistory)) {
    const before = exchange.preToolText
    pushContent(contents, "model", [...(before === undefined ? [] : [{ text: before }]), ...functionCallParts(exchange.entries)])
    pushContent(contents, "user", [
      ...exchange.entries.map((entry) => ({
        functionResponse: {
          name: entry.functionCall.name,
          response: { result: toolResultValue(entry) },
          ...(entry.functionCall.id === undefined ? {} : { id: entry.functionCall.id })
        }
      })),
      ...exchange.entries.flatMap((entry) => toolImages(entry).map(imagePart))
    ])
  }
  if (request.assistantPrefill !== undefined && request.assistantPrefill.length > 0) {
    pushContent(contents, "model", [{ text: request.assistantPrefill }])
  }
  const generationConfig = {
    ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
    ...(request.maxOutputTokens === undefined ? {} : { maxOutputTokens: request.maxOutputTokens })
  }
  return {
    contents,
    ...(request.system.trim().length === 0 ? {} : { systemInstruction: { parts: [{ text: request.system }] } }),
    ...(request.tools.length === 0 ? {} : {
      tools: [{
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters
        }))
      }]
    }),
    ...(Object.keys(generationConfig).length === 0 ? {} : { generationConfig }),
    ...options.extraBody
  }
}
