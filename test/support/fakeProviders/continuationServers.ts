/**
 * How real OpenAI-compatible servers treat a reply prefill (a trailing assistant message),
 * as handlers for FakeLlmServer (issue 11.9):
 *
 * - `llamaCppThinking`: llama.cpp's server with a thinking model refuses it with HTTP 400
 *   ("Assistant response prefill is incompatible with enable_thinking."); without one, it
 *   answers with `answer`.
 * - `vllmWithoutContinue`: vLLM continues a final assistant message only with
 *   `continue_final_message: true`; without it the message counts as finished and the model
 *   starts a new one, so it answers with the posted text again, then `answer`.
 */
import type { FakeHandler, FakeResponse, RecordedRequest } from "./FakeLlmServer"
import { finishChunk, openAiStream, textChunk } from "./openAiCompatible"

interface ChatBody {
  readonly messages?: ReadonlyArray<{ readonly role: string; readonly content?: unknown }>
  readonly continue_final_message?: boolean
}

const bodyOf = (request: RecordedRequest): ChatBody => (typeof request.json === "object" && request.json !== null ? request.json as ChatBody : {})

const trailingAssistant = (request: RecordedRequest): string | undefined => {
  const last = bodyOf(request).messages?.at(-1)
  return last?.role === "assistant" && typeof last.content === "string" ? last.content : undefined
}

const words = (text: string) => text.split(/(?<= )/).map(textChunk)

export const llamaCppThinking = (answer: string): FakeHandler => (request): FakeResponse =>
  trailingAssistant(request) === undefined
    ? openAiStream([...words(answer), finishChunk("stop")])
    : {
      status: 400,
      headers: { "content-type": "application/json" },
      parts: [{ write: JSON.stringify({ error: { code: 400, message: "Assistant response prefill is incompatible with enable_thinking.", type: "invalid_request_error" } }) }]
    }

export const vllmWithoutContinue = (answer: string): FakeHandler => (request): FakeResponse => {
  const posted = trailingAssistant(request)
  const continues = bodyOf(request).continue_final_message === true
  return openAiStream([...words(posted !== undefined && !continues ? `${posted}${answer}` : answer), finishChunk("stop")])
}
