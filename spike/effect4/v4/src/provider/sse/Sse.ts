import { Data, Effect } from "effect"
import { type Decoder, type DecodeStep, noOutput } from "../decodeWith"
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
