/**
 * OpenAI Responses API streaming events (`POST /v1/responses`, `stream: true`), for the fake
 * server. Each event is written as OpenAI does: `event: <type>` then `data: <json>` whose
 * `type` repeats the name, with an increasing `sequence_number`.
 *
 *   server.enqueue(responsesStream([
 *     created(), ...messageItem("msg_1", ["Hel", "lo"]), completed({ usage: responsesUsage(10, 2) })
 *   ]))
 */
import type { FakePart, FakeResponse, SseOut } from "./FakeLlmServer"
import { sseText, splitWrites } from "./FakeLlmServer"

export type ResponsesEvent = { readonly type: string; readonly [key: string]: unknown }

const responseObject = (status: string, extra: Record<string, unknown> = {}) => ({
  id: "resp_fake",
  object: "response",
  created_at: 1_741_290_958,
  status,
  model: "gpt-fake",
  output: [],
  usage: null,
  ...extra
})

export const responsesUsage = (input: number, output: number, details: { readonly cached?: number; readonly reasoning?: number } = {}) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: details.cached ?? 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: details.reasoning ?? 0 },
  total_tokens: input + output
})

export const created = (): ResponsesEvent => ({ type: "response.created", response: responseObject("in_progress") })
export const inProgress = (): ResponsesEvent => ({ type: "response.in_progress", response: responseObject("in_progress") })

export const itemAdded = (outputIndex: number, item: Record<string, unknown>): ResponsesEvent => ({
  type: "response.output_item.added",
  output_index: outputIndex,
  item
})
export const itemDone = (outputIndex: number, item: Record<string, unknown>): ResponsesEvent => ({
  type: "response.output_item.done",
  output_index: outputIndex,
  item
})

/** A message item: added, content part, one `output_text.delta` per piece, text done, item done. */
export const messageItem = (id: string, pieces: ReadonlyArray<string>, outputIndex = 0): ReadonlyArray<ResponsesEvent> => {
  const text = pieces.join("")
  return [
    itemAdded(outputIndex, { id, type: "message", status: "in_progress", role: "assistant", content: [] }),
    { type: "response.content_part.added", item_id: id, output_index: outputIndex, content_index: 0, part: { type: "output_text", text: "", annotations: [] } },
    ...pieces.map((delta): ResponsesEvent => ({ type: "response.output_text.delta", item_id: id, output_index: outputIndex, content_index: 0, delta, logprobs: [] })),
    { type: "response.output_text.done", item_id: id, output_index: outputIndex, content_index: 0, text, logprobs: [] },
    { type: "response.content_part.done", item_id: id, output_index: outputIndex, content_index: 0, part: { type: "output_text", text, annotations: [] } },
    itemDone(outputIndex, {
      id,
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }]
    })
  ]
}

/**
 * A function_call item: added (empty arguments), one `function_call_arguments.delta` per piece,
 * then (unless `cut`) `.done` and the item done with the whole arguments.
 */
export const functionCallItem = (
  call: { readonly id: string; readonly callId: string; readonly name: string },
  pieces: ReadonlyArray<string>,
  options: { readonly outputIndex?: number; readonly cut?: boolean } = {}
): ReadonlyArray<ResponsesEvent> => {
  const outputIndex = options.outputIndex ?? 0
  const args = pieces.join("")
  const item = { id: call.id, type: "function_call", call_id: call.callId, name: call.name }
  return [
    itemAdded(outputIndex, { ...item, status: "in_progress", arguments: "" }),
    ...pieces.map((delta): ResponsesEvent => ({ type: "response.function_call_arguments.delta", item_id: call.id, output_index: outputIndex, delta })),
    ...(options.cut === true ? [] : [
      { type: "response.function_call_arguments.done", item_id: call.id, output_index: outputIndex, arguments: args },
      itemDone(outputIndex, { ...item, status: "completed", arguments: args })
    ])
  ]
}

/**
 * A reasoning item: summary text deltas (when any), then the item done with its summary and,
 * when given, `encrypted_content` (as with `include: ["reasoning.encrypted_content"]`).
 */
export const reasoningItem = (
  id: string,
  summaryPieces: ReadonlyArray<string>,
  options: { readonly outputIndex?: number; readonly encrypted?: string } = {}
): ReadonlyArray<ResponsesEvent> => {
  const outputIndex = options.outputIndex ?? 0
  const text = summaryPieces.join("")
  const summary = summaryPieces.length === 0 ? [] : [{ type: "summary_text", text }]
  return [
    itemAdded(outputIndex, { id, type: "reasoning", summary: [] }),
    ...(summaryPieces.length === 0 ? [] : [
      { type: "response.reasoning_summary_part.added", item_id: id, output_index: outputIndex, summary_index: 0, part: { type: "summary_text", text: "" } },
      ...summaryPieces.map((delta): ResponsesEvent => ({ type: "response.reasoning_summary_text.delta", item_id: id, output_index: outputIndex, summary_index: 0, delta })),
      { type: "response.reasoning_summary_text.done", item_id: id, output_index: outputIndex, summary_index: 0, text },
      { type: "response.reasoning_summary_part.done", item_id: id, output_index: outputIndex, summary_index: 0, part: { type: "summary_text", text } }
    ]),
    itemDone(outputIndex, { id, type: "reasoning", summary, ...(options.encrypted === undefined ? {} : { encrypted_content: options.encrypted }) })
  ]
}

export const completed = (extra: { readonly usage?: unknown; readonly output?: ReadonlyArray<unknown> } = {}): ResponsesEvent => ({
  type: "response.completed",
  response: responseObject("completed", { output: extra.output ?? [], usage: extra.usage ?? null })
})

export const incomplete = (reason: string, extra: { readonly usage?: unknown } = {}): ResponsesEvent => ({
  type: "response.incomplete",
  response: responseObject("incomplete", { incomplete_details: { reason }, usage: extra.usage ?? null })
})

export const failed = (code: string, message: string): ResponsesEvent => ({
  type: "response.failed",
  response: responseObject("failed", { error: { code, message } })
})

/** The stream-level `error` event. */
export const errorEvent = (code: string | null, message: string): ResponsesEvent => ({ type: "error", code, message, param: null })

/** The whole SSE text: `event:` + `data:` per event, numbered in order. */
export const responsesTranscript = (events: ReadonlyArray<ResponsesEvent | SseOut>, options: { readonly crlf?: boolean } = {}): string => {
  let sequence = 0
  return sseText(
    events.map((event): SseOut =>
      "type" in event && typeof event.type === "string"
        ? { event: event.type, data: JSON.stringify({ ...event, sequence_number: sequence++ }) }
        : event as SseOut
    ),
    options
  )
}

export const responsesStream = (
  events: ReadonlyArray<ResponsesEvent | SseOut>,
  options: { readonly crlf?: boolean; readonly splitSizes?: ReadonlyArray<number>; readonly after?: "end" | "hang" | "destroy" } = {}
): FakeResponse => {
  const text = responsesTranscript(events, options)
  const parts: Array<FakePart> = options.splitSizes === undefined
    ? text.split(/(?<=\n\n|\r\n\r\n)/).map((frame) => ({ write: frame }))
    : [...splitWrites(text, options.splitSizes)]
  if (options.after === "hang") parts.push({ hang: true })
  if (options.after === "destroy") parts.push({ destroy: true })
  return { parts }
}
