import { Data, Effect, type Stream } from "effect"
import { type Decoder, decodeWith, type DecodeStep, noOutput } from "../decodeWith"
import { defaultMaxEventChars, type SseFrame, SseParser } from "./SseParser"

export type { SseFrame } from "./SseParser"

/** The event stream broke the framing rules badly enough that we stop reading it. */
class SseError extends Data.TaggedError("SseError")<{
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
    // Built only when it happens: an error captures a stack trace, which is not free per stream.
    const tooLarge = Effect.suspend(() => Effect.fail(new SseError({ reason: "EventTooLarge", maxEventChars })))
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

/**
 * Bytes → text → SSE frames → `make()`'s output in one decoder. It decodes exactly like
 * `Stream.decodeText()` + `decodeSse()` + `decodeWith(make)`, in the same order (an event too
 * large fails after the frames before it were decoded), but each stage of a Stream costs a
 * channel of its own per request, and a model call is short enough for that to show.
 */
export const sseBytesDecoder = <O, E, E2>(
  make: () => Decoder<SseFrame, O, E>,
  onTooLarge: (error: SseError) => Effect.Effect<never, E2>,
  options: { readonly maxEventChars?: number } = {}
) =>
(): Decoder<Uint8Array, O, E | E2> => {
  const maxEventChars = options.maxEventChars ?? defaultMaxEventChars
  const text = new TextDecoder()
  const parser = new SseParser(maxEventChars)
  const decoder = make()
  const tooLarge = (): DecodeStep<O, E | E2> => ({
    out: [],
    then: Effect.suspend(() => onTooLarge(new SseError({ reason: "EventTooLarge", maxEventChars }))),
    done: true
  })
  return {
    push: (input) => {
      const frames: Array<SseFrame> = []
      for (const bytes of input) parser.feed(text.decode(bytes, { stream: true }), frames)
      const step: DecodeStep<O, E | E2> = frames.length === 0 ? noOutput : decoder.push(frames)
      return !parser.tooLarge || step.done === true ? step : { ...step, next: tooLarge }
    },
    end: () => {
      const frames: Array<SseFrame> = []
      parser.end(frames)
      const step: DecodeStep<O, E | E2> = frames.length === 0 ? noOutput : decoder.push(frames)
      return step.done === true ? step : { ...step, next: decoder.end }
    }
  }
}

/** `sseBytesDecoder` as one stream stage. */
export const decodeSseBytes = <O, E, E2>(
  make: () => Decoder<SseFrame, O, E>,
  onTooLarge: (error: SseError) => Effect.Effect<never, E2>,
  options: { readonly maxEventChars?: number } = {}
) =>
<E0, R>(self: Stream.Stream<Uint8Array, E0, R>): Stream.Stream<O, E0 | E | E2, R> =>
  decodeWith(sseBytesDecoder(make, onTooLarge, options))(self)
