import { Data, Effect, type Stream } from "effect"
import { decodeWith, noOutput } from "../decodeWith"
import { defaultMaxEventChars, type SseFrame, SseParser } from "./SseParser"

export type { SseFrame } from "./SseParser"

/** The event stream broke the framing rules badly enough that we stop reading it. */
export class SseError extends Data.TaggedError("SseError")<{
  readonly reason: "EventTooLarge"
  readonly maxEventChars: number
}> {
  override get message(): string {
    return `an SSE event grew past ${this.maxEventChars} characters without ending`
  }
}

/**
 * Decodes text into SSE frames (events and comments). Any split of the same text, including
 * CRLF pairs and multi-byte characters cut across reads, decodes to the same frames.
 */
export const decodeSse = (options: { readonly maxEventChars?: number } = {}) =>
<E, R>(self: Stream.Stream<string, E, R>): Stream.Stream<SseFrame, E | SseError, R> => {
  const maxEventChars = options.maxEventChars ?? defaultMaxEventChars
  return decodeWith<string, SseFrame, SseError>(() => {
    const parser = new SseParser(maxEventChars)
    const tooLarge = Effect.fail(new SseError({ reason: "EventTooLarge", maxEventChars }))
    return {
      push: (input) => {
        const out: Array<SseFrame> = []
        for (const text of input) parser.feed(text, out)
        return parser.tooLarge ? { out, then: tooLarge, done: true } : out.length === 0 ? noOutput : { out }
      },
      end: () => {
        const out: Array<SseFrame> = []
        parser.end(out)
        return { out }
      }
    }
  })(self)
}
