/**
 * Fake model servers that enforce a context window the way the real ones do: each request's
 * prompt is counted (with a tokenizer of the fake's own, not loopcord's estimate), and a request
 * over the window is refused with the vendor's real refusal (HTTP 400 and its body). A request
 * that fits is answered by `act` in the vendor's streaming format, with the prompt tokens reported
 * as usage, as real servers report them.
 *
 * - `openai`: Chat Completions, `context_length_exceeded`;
 * - `llamacpp`: Chat Completions, `exceed_context_size_error` with `n_prompt_tokens` / `n_ctx`,
 *   and `GET /props` saying `n_ctx` (unless `props: false`);
 * - `anthropic`: Messages, "prompt is too long: N tokens > W maximum", or "input length and
 *   `max_tokens` exceed context limit" when the prompt and `max_tokens` together are over;
 * - `gemini`: `streamGenerateContent`, `INVALID_ARGUMENT` "The input token count (N) exceeds the
 *   maximum number of tokens allowed (W)."
 *
 *   server.setHandler(windowedVendor("anthropic", { window: 32_000, act: (view) => ... }))
 */
import type { FakeHandler, FakeResponse, RecordedRequest } from "./FakeLlmServer"
import { jsonResponse } from "./FakeLlmServer"
import { anthropicStream, messageDelta, messageStart, messageStop, textBlock, toolUseBlock } from "./anthropic"
import { geminiCall, geminiFinish, geminiStream, geminiText, usageMetadata } from "./gemini"
import { finishChunk, openAiStream, textChunk, toolCallChunk, usageChunk } from "./openAiCompatible"

export type WindowVendor = "openai" | "llamacpp" | "anthropic" | "gemini"

/** What the fake sees of a request: how many tool results it carries, the user texts. */
export interface RequestView {
  readonly toolResults: number
  readonly lastUserText: string
  /** Every user-side text (system-role items sent as user text included), in order. */
  readonly userTexts: ReadonlyArray<string>
  readonly promptTokens: number
}

export type Act = { readonly call: { readonly name: string; readonly args: Record<string, unknown> } } | { readonly text: string }

/** What a windowed fake did, for assertions. */
export interface WindowLog {
  readonly counted: Array<number>
  readonly refused: Array<number>
}

const record = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {})
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

/**
 * The fake's tokenizer: over every string value of the body (keys aside), a token is a run of up
 * to 5 letters, up to 3 digits, or one other non-space character; plus 4 per message.
 */
export const fakeTokens = (body: unknown): number => {
  let count = 0
  const visit = (value: unknown): void => {
    if (typeof value === "string") count += value.match(/[A-Za-z]{1,5}|\d{1,3}|[^\sA-Za-z\d]/g)?.length ?? 0
    else if (Array.isArray(value)) value.forEach(visit)
    else if (typeof value === "object" && value !== null) Object.values(value).forEach(visit)
  }
  const json = record(body)
  visit(json["system"] ?? json["systemInstruction"])
  visit(json["tools"])
  for (const message of list(json["messages"] ?? json["contents"])) {
    count += 4
    visit(message)
  }
  return count
}

const textsOf = (content: unknown): ReadonlyArray<string> =>
  typeof content === "string"
    ? [content]
    : list(content).flatMap((part) => {
      const item = record(part)
      return typeof item["text"] === "string" && item["type"] !== "tool_result" ? [item["text"]] : []
    })

/** Tool results and the last user text, in each vendor's wire form. */
export const viewOf = (vendor: WindowVendor, body: unknown): Omit<RequestView, "promptTokens"> => {
  const json = record(body)
  if (vendor === "gemini") {
    const contents = list(json["contents"]).map(record)
    const parts = contents.flatMap((content) => list(content["parts"]).map(record))
    const users = contents.filter((content) => content["role"] === "user")
    const texts = users.flatMap((content) => list(content["parts"]).map(record)).flatMap((part) => (typeof part["text"] === "string" ? [part["text"]] : []))
    return { toolResults: parts.filter((part) => part["functionResponse"] !== undefined).length, lastUserText: texts.at(-1) ?? "", userTexts: texts }
  }
  const messages = list(json["messages"]).map(record)
  if (vendor === "anthropic") {
    const blocks = messages.flatMap((message) => list(message["content"]).map(record))
    const users = messages.filter((message) => message["role"] === "user").flatMap((message) => textsOf(message["content"]))
    return { toolResults: blocks.filter((block) => block["type"] === "tool_result").length, lastUserText: users.at(-1) ?? "", userTexts: users }
  }
  const users = messages.filter((message) => message["role"] === "user").flatMap((message) => textsOf(message["content"]))
  return { toolResults: messages.filter((message) => message["role"] === "tool").length, lastUserText: users.at(-1) ?? "", userTexts: users }
}

/** The vendor's refusal of a request of `prompt` tokens against `window` (`maxTokens`: Anthropic's requested output). */
export const refusal = (vendor: WindowVendor, prompt: number, window: number, maxTokens = 0): FakeResponse => {
  switch (vendor) {
    case "openai":
      return jsonResponse(400, {
        error: {
          message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${prompt} tokens. Please reduce the length of the messages.`,
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded"
        }
      })
    case "llamacpp":
      return jsonResponse(400, {
        error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: prompt, n_ctx: window }
      })
    case "anthropic":
      return jsonResponse(400, {
        type: "error",
        error: {
          type: "invalid_request_error",
          message: prompt > window
            ? `prompt is too long: ${prompt} tokens > ${window} maximum`
            : `input length and \`max_tokens\` exceed context limit: ${prompt} + ${maxTokens} > ${window}, decrease input length or \`max_tokens\` and try again`
        }
      })
    case "gemini":
      return jsonResponse(400, {
        error: { code: 400, message: `The input token count (${prompt}) exceeds the maximum number of tokens allowed (${window}).`, status: "INVALID_ARGUMENT" }
      })
  }
}

let calls = 0

/** An answer in the vendor's streaming format, reporting `prompt` input tokens. */
export const answer = (vendor: WindowVendor, act: Act, prompt: number): FakeResponse => {
  if (vendor === "gemini") {
    return "call" in act
      ? geminiStream([geminiCall(act.call.name, act.call.args), geminiFinish("STOP", usageMetadata(prompt, 12))])
      : geminiStream([geminiText(act.text), geminiFinish("STOP", usageMetadata(prompt, 8))])
  }
  if (vendor === "anthropic") {
    const id = `toolu_fake_${++calls}`
    return "call" in act
      ? anthropicStream([messageStart(prompt), ...toolUseBlock(0, { id, name: act.call.name }, [JSON.stringify(act.call.args)]), messageDelta("tool_use", 12), messageStop()])
      : anthropicStream([messageStart(prompt), ...textBlock(0, [act.text]), messageDelta("end_turn", 8), messageStop()])
  }
  return "call" in act
    ? openAiStream([toolCallChunk({ index: 0, id: `call_fake_${++calls}`, name: act.call.name, arguments: JSON.stringify(act.call.args) }), finishChunk("tool_calls"), usageChunk(prompt, 12)])
    : openAiStream([textChunk(act.text), finishChunk("stop"), usageChunk(prompt, 8)])
}

const isGeneration = (request: RecordedRequest) =>
  request.method === "POST" && /chat\/completions|\/messages|streamGenerateContent/.test(request.path)

export const windowedVendor = (
  vendor: WindowVendor,
  options: {
    readonly window: number
    readonly act: (view: RequestView) => Act
    readonly log?: WindowLog
    /** llama.cpp only: answer `GET /props` with the window (default true). */
    readonly props?: boolean
  }
): FakeHandler => (request) => {
  if (vendor === "llamacpp" && request.method === "GET" && request.path === "/props" && options.props !== false) {
    return jsonResponse(200, { default_generation_settings: { n_ctx: options.window }, total_slots: 1, model_path: "model.gguf" })
  }
  if (!isGeneration(request)) return jsonResponse(404, { error: { message: "not found" } })
  const prompt = fakeTokens(request.json)
  options.log?.counted.push(prompt)
  const maxTokens = vendor === "anthropic" ? Number(record(request.json)["max_tokens"] ?? 0) : 0
  if (prompt + maxTokens > options.window) {
    options.log?.refused.push(prompt)
    return refusal(vendor, prompt, options.window, maxTokens)
  }
  return answer(vendor, options.act({ ...viewOf(vendor, request.json), promptTokens: prompt }), prompt)
}
