/**
 * Anthropic Messages streaming events (`POST /v1/messages`, `stream: true`), for the fake server.
 *
 *   server.enqueue(anthropicStream([messageStart(), ...textBlock(0, ["Hi"]), messageDelta("end_turn", 5), messageStop()]))
 */
import type { FakePart, FakeResponse, SseOut } from "./FakeLlmServer"
import { sseText, splitWrites } from "./FakeLlmServer"

export type AnthropicEvent = { readonly type: string; readonly [key: string]: unknown }

export const messageStart = (inputTokens = 10): AnthropicEvent => ({
  type: "message_start",
  message: {
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: "claude-fake",
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: inputTokens, output_tokens: 1 }
  }
})

export const blockStart = (index: number, block: Record<string, unknown>): AnthropicEvent => ({
  type: "content_block_start",
  index,
  content_block: block
})
export const blockDelta = (index: number, delta: Record<string, unknown>): AnthropicEvent => ({
  type: "content_block_delta",
  index,
  delta
})
export const blockStop = (index: number): AnthropicEvent => ({ type: "content_block_stop", index })

export const textBlock = (index: number, texts: ReadonlyArray<string>): ReadonlyArray<AnthropicEvent> => [
  blockStart(index, { type: "text", text: "" }),
  ...texts.map((text) => blockDelta(index, { type: "text_delta", text })),
  blockStop(index)
]

export const thinkingBlock = (index: number, texts: ReadonlyArray<string>, signature: string): ReadonlyArray<AnthropicEvent> => [
  blockStart(index, { type: "thinking", thinking: "" }),
  ...texts.map((thinking) => blockDelta(index, { type: "thinking_delta", thinking })),
  blockDelta(index, { type: "signature_delta", signature }),
  blockStop(index)
]

export const toolUseBlock = (
  index: number,
  call: { readonly id: string; readonly name: string },
  jsonPieces: ReadonlyArray<string>,
  options: { readonly stop?: boolean } = {}
): ReadonlyArray<AnthropicEvent> => [
  blockStart(index, { type: "tool_use", id: call.id, name: call.name, input: {} }),
  ...jsonPieces.map((partial_json) => blockDelta(index, { type: "input_json_delta", partial_json })),
  ...(options.stop === false ? [] : [blockStop(index)])
]

export const messageDelta = (stopReason: string, outputTokens: number): AnthropicEvent => ({
  type: "message_delta",
  delta: { stop_reason: stopReason, stop_sequence: null },
  usage: { output_tokens: outputTokens }
})

export const messageStop = (): AnthropicEvent => ({ type: "message_stop" })
export const ping = (): AnthropicEvent => ({ type: "ping" })
export const errorEvent = (type: string, message: string): AnthropicEvent => ({
  type: "error",
  error: { type, message }
})

export const anthropicTranscript = (
  events: ReadonlyArray<AnthropicEvent | SseOut>,
  options: { readonly crlf?: boolean } = {}
): string =>
  sseText(
    events.map((event): SseOut =>
      "type" in event && typeof event.type === "string"
        ? { event: event.type, data: JSON.stringify(event) }
        : event as SseOut
    ),
    options
  )

export const anthropicStream = (
  events: ReadonlyArray<AnthropicEvent | SseOut>,
  options: { readonly crlf?: boolean; readonly splitSizes?: ReadonlyArray<number>; readonly after?: "end" | "hang" | "destroy" } = {}
): FakeResponse => {
  const text = anthropicTranscript(events, options)
  const parts: Array<FakePart> = options.splitSizes === undefined
    ? text.split(/(?<=\n\n|\r\n\r\n)/).map((frame) => ({ write: frame }))
    : [...splitWrites(text, options.splitSizes)]
  if (options.after === "hang") parts.push({ hang: true })
  if (options.after === "destroy") parts.push({ destroy: true })
  return { parts }
}
