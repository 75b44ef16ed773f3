import { Effect, Layer, Ref } from "effect"
import { ResponseSink } from "../../../src/loop/ResponseSink"
import type { UserNotice } from "../../../src/loop/UserNotice"

/**
 * An in-memory ResponseSink: `write` buffers, `endPass("flush")` delivers the buffer (and returns
 * it, as the pass's accumulatedText), `endPass("discard")` drops it. Notices are recorded in order.
 */
export interface RecordingResponseSink {
  readonly layer: Layer.Layer<ResponseSink>
  readonly notices: Effect.Effect<ReadonlyArray<UserNotice>>
  /** Text delivered so far in the turn. */
  readonly delivered: Effect.Effect<string>
}

export const makeRecordingResponseSink: Effect.Effect<RecordingResponseSink> = Effect.gen(function*() {
  const buffer = yield* Ref.make("")
  const delivered = yield* Ref.make("")
  const notices = yield* Ref.make<ReadonlyArray<UserNotice>>([])
  const sink = ResponseSink.of({
    write: (delta) => Ref.update(buffer, (text) => text + delta),
    endPass: (mode) =>
      Effect.gen(function*() {
        const text = yield* Ref.getAndSet(buffer, "")
        if (mode === "discard") return ""
        yield* Ref.update(delivered, (all) => all + text)
        return text
      }),
    delivered: Ref.get(delivered),
    notice: (notice) => Ref.update(notices, (all) => [...all, notice])
  })
  return { layer: Layer.succeed(ResponseSink, sink), notices: Ref.get(notices), delivered: Ref.get(delivered) }
})
