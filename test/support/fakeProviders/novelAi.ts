/**
 * NovelAI's text API (`POST /ai/generate-stream` on text.novelai.net), for the fake server: one
 * SSE event per token, as NovelAI sends them,
 *
 *     event: newToken
 *     id: 3
 *     data: {"token":" the","ptr":3,"final":false,"logprobs":null}
 *
 * the last one with `"final": true`.
 *
 * - `novelAiStream(tokens)`: exactly these tokens (the last final), for one request.
 * - `novelAiStory(tokens)`: a handler that behaves like the model continuing a fixed story:
 *   each request continues from the request's `input` (it finds how much of the story the
 *   input already ends with) and streams at most `parameters.max_length` tokens, the last one
 *   `final`; the story's end comes sooner when it has fewer tokens left (the model stopped).
 */
import type { FakeHandler, FakePart, FakeResponse } from "./FakeLlmServer"
import { splitWrites } from "./FakeLlmServer"

export const novelAiTranscript = (tokens: ReadonlyArray<string>, options: { readonly crlf?: boolean; readonly start?: number; readonly omitFinal?: boolean } = {}): string => {
  const eol = options.crlf === true ? "\r\n" : "\n"
  const start = options.start ?? 0
  // A model with nothing left to say still ends the stream: one final event with an empty token.
  const sent = tokens.length === 0 && options.omitFinal !== true ? [""] : tokens
  return sent.map((token, index) => {
    const data = JSON.stringify({ token, ptr: start + index, final: options.omitFinal !== true && index === sent.length - 1, logprobs: null })
    return `event: newToken${eol}id: ${start + index}${eol}data: ${data}${eol}${eol}`
  }).join("")
}

export const novelAiStream = (
  tokens: ReadonlyArray<string>,
  options: {
    readonly crlf?: boolean
    readonly start?: number
    readonly splitSizes?: ReadonlyArray<number>
    readonly after?: "end" | "hang" | "destroy"
    readonly omitFinal?: boolean
  } = {}
): FakeResponse => {
  const text = novelAiTranscript(tokens, options)
  const parts: Array<FakePart> = options.splitSizes === undefined
    ? text.split(/(?<=\n\n|\r\n\r\n)/).map((frame) => ({ write: frame }))
    : [...splitWrites(text, options.splitSizes)]
  if (options.after === "hang") parts.push({ hang: true })
  if (options.after === "destroy") parts.push({ destroy: true })
  return { parts }
}

export interface NovelAiStory {
  readonly handler: FakeHandler
  /** `[tokens already in the input, max_length asked for, tokens sent]` per request. */
  readonly fragments: Array<readonly [number, number, number]>
}

/** The model continuing `story` (tokens in order) from wherever each request's input stops. */
export const novelAiStory = (story: ReadonlyArray<string>): NovelAiStory => {
  const fragments: Array<readonly [number, number, number]> = []
  const handler: FakeHandler = (request) => {
    const body = request.json as { readonly input?: unknown; readonly parameters?: { readonly max_length?: unknown } } | undefined
    const input = typeof body?.input === "string" ? body.input : ""
    const maxLength = typeof body?.parameters?.max_length === "number" ? body.parameters.max_length : 40
    let done = 0
    for (let count = story.length; count > 0; count--) {
      if (input.endsWith(story.slice(0, count).join(""))) {
        done = count
        break
      }
    }
    const next = story.slice(done, done + maxLength)
    fragments.push([done, maxLength, next.length])
    return novelAiStream(next, { start: done })
  }
  return { handler, fragments }
}
