/**
 * Chat Completions streaming frames as OpenAI-compatible servers send them, for the fake server.
 *
 *   server.enqueue(openAiStream([textChunk("Hel"), textChunk("lo"), finishChunk("stop"), usageChunk(3, 2)]))
 *   server.enqueue(openAiTextResponse(["a", "b", "c"]))            // n deltas, finish, usage, [DONE]
 *
 * The client's base URL is `${server.url}/v1`; requests arrive at `/v1/chat/completions`.
 */
import type { FakePart, FakeResponse, SseOut } from "./FakeLlmServer"
import { sseText, splitWrites } from "./FakeLlmServer"

export interface ChunkDelta {
  readonly content?: string
  readonly reasoning_content?: string
  readonly reasoning?: string
  readonly reasoning_details?: ReadonlyArray<unknown>
  readonly tool_calls?: ReadonlyArray<{
    readonly index?: number
    readonly id?: string
    readonly type?: "function"
    readonly function?: { readonly name?: string; readonly arguments?: string }
  }>
}

let created = 1_700_000_000

export const chunk = (delta: ChunkDelta, finishReason: string | null = null): Record<string, unknown> => ({
  id: "chatcmpl-fake",
  object: "chat.completion.chunk",
  created: created++,
  model: "fake-model",
  choices: [{ index: 0, delta: { role: "assistant", ...delta }, finish_reason: finishReason }]
})

export const textChunk = (content: string) => chunk({ content })

export const toolCallChunk = (
  call: { readonly index?: number; readonly id?: string; readonly name?: string; readonly arguments?: string }
) =>
  chunk({
    tool_calls: [{
      index: call.index ?? 0,
      ...(call.id === undefined ? {} : { id: call.id, type: "function" as const }),
      function: {
        ...(call.name === undefined ? {} : { name: call.name }),
        ...(call.arguments === undefined ? {} : { arguments: call.arguments })
      }
    }]
  })

export const finishChunk = (reason: string) => chunk({}, reason)

/** The usage chunk OpenAI sends last with `stream_options.include_usage` (empty `choices`). */
export const usageChunk = (promptTokens: number, completionTokens: number) => ({
  id: "chatcmpl-fake",
  object: "chat.completion.chunk",
  created: created++,
  model: "fake-model",
  choices: [],
  usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens }
})

export interface StreamOptions {
  /** Line ends: `\r\n` instead of `\n`. */
  readonly crlf?: boolean
  /** Cut the transcript into writes of these sizes (cycled); default one write per frame. */
  readonly splitSizes?: ReadonlyArray<number>
  /** Leave out the final `data: [DONE]`. */
  readonly omitDone?: boolean
  /** Frames (e.g. comments) to send before the first chunk. */
  readonly preamble?: ReadonlyArray<SseOut>
  /** What to do after the last frame: end normally, hang, or drop the connection. */
  readonly after?: "end" | "hang" | "destroy"
  readonly gapMs?: number | "none"
}

/** A full SSE transcript of chunks (JSON objects or raw frames) followed by `[DONE]`. */
export const openAiTranscript = (
  chunks: ReadonlyArray<Record<string, unknown> | SseOut>,
  options: StreamOptions = {}
): string =>
  sseText(
    [
      ...(options.preamble ?? []),
      ...chunks.map((item): SseOut => ("data" in item && typeof item.data === "string") || "comment" in item ? item as SseOut : { data: JSON.stringify(item) }),
      ...(options.omitDone === true ? [] : [{ data: "[DONE]" }])
    ],
    { crlf: options.crlf ?? false }
  )

export const openAiStream = (
  chunks: ReadonlyArray<Record<string, unknown> | SseOut>,
  options: StreamOptions = {}
): FakeResponse => {
  const text = openAiTranscript(chunks, options)
  const parts: Array<FakePart> = options.splitSizes === undefined
    ? text.split(/(?<=\n\n|\r\n\r\n)/).map((frame) => ({ write: frame }))
    : [...splitWrites(text, options.splitSizes)]
  if (options.after === "hang") parts.push({ hang: true })
  if (options.after === "destroy") parts.push({ destroy: true })
  return { parts, ...(options.gapMs === undefined ? {} : { gapMs: options.gapMs }) }
}

/**
 * The benchmark shape: `deltas` text chunks, a `stop` finish, a usage chunk, `[DONE]`, written
 * in writes of about `writeBytes` as fast as the socket drains (the client is the bottleneck).
 */
export const openAiTextResponse = (
  deltas: ReadonlyArray<string>,
  options: { readonly writeBytes?: number } = {}
): FakeResponse => {
  const text = openAiTranscript([...deltas.map(textChunk), finishChunk("stop"), usageChunk(10, deltas.length)])
  const size = options.writeBytes ?? 16_384
  return { parts: splitWrites(text, [size]), gapMs: "none" }
}
