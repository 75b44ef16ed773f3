/**
 * Gemini `streamGenerateContent?alt=sse` chunks (GenerateContentResponse JSON per `data:`), for the fake server.
 *
 *   server.enqueue(geminiStream([geminiText("Hi"), geminiFinish("STOP", usage(5, 2))]))
 */
import type { FakePart, FakeResponse, SseOut } from "./FakeLlmServer"
import { sseText, splitWrites } from "./FakeLlmServer"

/** Gemini's `usageMetadata`: `cached` is the part of the prompt served from a cached context. */
export const usageMetadata = (prompt: number, candidates: number, thoughts = 0, cached = 0) => ({
  promptTokenCount: prompt,
  candidatesTokenCount: candidates,
  ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
  totalTokenCount: prompt + candidates + thoughts
})

export const geminiParts = (
  parts: ReadonlyArray<Record<string, unknown>>,
  options: { readonly finishReason?: string; readonly usage?: Record<string, unknown> } = {}
): Record<string, unknown> => ({
  candidates: [{
    content: { role: "model", parts },
    index: 0,
    ...(options.finishReason === undefined ? {} : { finishReason: options.finishReason })
  }],
  ...(options.usage === undefined ? {} : { usageMetadata: options.usage }),
  modelVersion: "gemini-fake"
})

export const geminiText = (text: string) => geminiParts([{ text }])
export const geminiThought = (text: string) => geminiParts([{ text, thought: true }])
export const geminiCall = (name: string, args: Record<string, unknown>, thoughtSignature?: string) =>
  geminiParts([{ functionCall: { name, args }, ...(thoughtSignature === undefined ? {} : { thoughtSignature }) }])
export const geminiFinish = (finishReason: string, usage?: Record<string, unknown>) => ({
  candidates: [{ content: { role: "model", parts: [{ text: "" }] }, index: 0, finishReason }],
  ...(usage === undefined ? {} : { usageMetadata: usage }),
  modelVersion: "gemini-fake"
})

export const geminiStream = (
  chunks: ReadonlyArray<Record<string, unknown> | SseOut>,
  options: { readonly crlf?: boolean; readonly splitSizes?: ReadonlyArray<number>; readonly after?: "end" | "hang" | "destroy" } = {}
): FakeResponse => {
  // Gemini separates events with CRLF pairs on the wire; default to that.
  const text = sseText(
    chunks.map((item): SseOut => ("data" in item && typeof item.data === "string") || "comment" in item ? item as SseOut : { data: JSON.stringify(item) }),
    { crlf: options.crlf ?? true }
  )
  const parts: Array<FakePart> = options.splitSizes === undefined
    ? text.split(/(?<=\n\n|\r\n\r\n)/).map((frame) => ({ write: frame }))
    : [...splitWrites(text, options.splitSizes)]
  if (options.after === "hang") parts.push({ hang: true })
  if (options.after === "destroy") parts.push({ destroy: true })
  return { parts }
}
