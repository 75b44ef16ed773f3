import { Chunk, Duration, Effect, Option, Ref } from "effect"
import type { DeliveryError, ResponseSink } from "../loop/ResponseSink"
import type { ToolActivity } from "../loop/ToolActivity"
import type { UserNotice } from "../loop/UserNotice"

/** Everything a collecting sink saw, in order. */
type SinkEvent =
  | { readonly _tag: "Delivered"; readonly text: string }
  | { readonly _tag: "PassEnded"; readonly mode: "flush" | "discard"; readonly text: string; readonly discarded: string }
  | { readonly _tag: "Notice"; readonly notice: UserNotice }
  | { readonly _tag: "Tool"; readonly activity: ToolActivity }

export interface CollectingSinkOptions {
  /**
   * Hold text until this many characters are buffered (like a front that posts in chunks);
   * `endPass("flush")` delivers the rest, `endPass("discard")` drops it. 0 (default) delivers
   * every write at once.
   */
  readonly chunkSize?: number
  /** Each delivery takes this long on the Clock (an in-flight send). */
  readonly deliveryDelay?: Duration.Input
  /** Fail every delivery from the n-th one on (0-based) with this error. */
  readonly failFrom?: { readonly delivery: number; readonly error: DeliveryError }
  /** The reply text one turn can show (`ResponseSink.capacity`); unset: the loop's default. */
  readonly capacity?: number
}

export interface CollectingSink {
  readonly sink: ResponseSink["Service"]
  readonly events: Effect.Effect<ReadonlyArray<SinkEvent>>
  readonly notices: Effect.Effect<ReadonlyArray<UserNotice>>
  readonly delivered: Effect.Effect<string>
}

interface State {
  readonly delivered: string
  readonly passText: string
  readonly buffer: string
  readonly deliveries: number
  /** A Chunk: appending one event costs no copy of the others (a reply may come in a million deltas). */
  readonly events: Chunk.Chunk<SinkEvent>
}

/**
 * A ResponseSink that keeps everything in memory: the `--once --json` front collects the reply
 * with it, and tests use it (with chunking, slow or failing deliveries) to observe what the
 * user would have seen.
 */
export const makeCollectingSink = (options: CollectingSinkOptions = {}): Effect.Effect<CollectingSink> =>
  Effect.gen(function*() {
    const state = yield* Ref.make<State>({ delivered: "", passText: "", buffer: "", deliveries: 0, events: Chunk.empty<SinkEvent>() })
    const chunkSize = options.chunkSize ?? 0
    const delay = options.deliveryDelay === undefined ? Option.none() : Option.some(Duration.fromInputUnsafe(options.deliveryDelay))

    const record = (event: SinkEvent) => Ref.update(state, (s) => ({ ...s, events: Chunk.append(s.events, event) }))

    const deliver = (text: string): Effect.Effect<void, DeliveryError> =>
      Effect.gen(function*() {
        if (text.length === 0) return
        const index = yield* Ref.modify(state, (s) => [s.deliveries, { ...s, deliveries: s.deliveries + 1 }])
        if (options.failFrom !== undefined && index >= options.failFrom.delivery) {
          return yield* Effect.fail(options.failFrom.error)
        }
        if (Option.isSome(delay)) yield* Effect.sleep(delay.value)
        const event: SinkEvent = { _tag: "Delivered", text }
        yield* Ref.update(state, (s) => ({
          ...s,
          delivered: s.delivered + text,
          passText: s.passText + text,
          events: Chunk.append(s.events, event)
        }))
      })

    const takeBuffer = Ref.modify(state, (s) => [s.buffer, { ...s, buffer: "" }])

    const sink: ResponseSink["Service"] = {
      write: (delta) =>
        chunkSize === 0
          ? deliver(delta)
          : Effect.flatMap(
            Ref.modify(state, (s) => {
              const buffer = s.buffer + delta
              return buffer.length >= chunkSize ? [buffer, { ...s, buffer: "" }] : ["", { ...s, buffer }]
            }),
            deliver
          ),
      endPass: (mode) =>
        Effect.gen(function*() {
          const rest = yield* takeBuffer
          if (mode === "flush") yield* deliver(rest)
          const text = yield* Ref.modify(state, (s) => [s.passText, { ...s, passText: "" }])
          yield* record({ _tag: "PassEnded", mode, text, discarded: mode === "discard" ? rest : "" })
          return text
        }),
      delivered: Effect.map(Ref.get(state), (s) => s.delivered),
      ...(options.capacity === undefined ? {} : { capacity: options.capacity }),
      notice: (notice) => record({ _tag: "Notice", notice }),
      toolActivity: (activity) => record({ _tag: "Tool", activity })
    }

    const events = Effect.map(Ref.get(state), (s) => Chunk.toReadonlyArray(s.events))
    return {
      sink,
      events,
      notices: Effect.map(events, (all) => all.flatMap((event) => (event._tag === "Notice" ? [event.notice] : []))),
      delivered: sink.delivered
    }
  })
