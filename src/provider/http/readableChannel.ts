import { type Array as Arr, Channel, Effect, Scope } from "effect"
import type { Readable } from "node:stream"
import { type Decoder, type DecodeStep, type SourceRead, stepPull } from "../decodeWith"

/**
 * Whether the source pushed its last chunk (Node's stream state; `readableEnded` only turns true
 * once `end` was emitted, after the buffer was read out). Unknown counts as not: destroyed.
 */
const fullyReceived = (readable: Readable): boolean =>
  (readable as { readonly _readableState?: { readonly ended?: unknown } })._readableState?.ended === true

/**
 * A Node Readable as a Channel of what `make()`'s decoder (a fresh one per run) makes of its
 * chunks: each pull decodes what is buffered and waits for `readable` only when nothing is, so
 * nothing is read ahead of the consumer (back-pressure). A decoder step that is `done` stops the
 * reading. The readable is destroyed when the channel's scope closes before it was received in
 * full (an interrupt, a decoder or consumer that stopped early); for an undici body that aborts
 * the request and closes the socket.
 *
 * One channel whose pull reads the Readable, with one finalizer on the channel's scope: the
 * platform's body stream layers a latch, listeners and two `ensuring` stages over each response,
 * and a decoding stage after it is a pipe of its own, each of which a short model call pays for
 * in allocation.
 */
export const readableChannel = <O, E, E2>(
  readable: Readable,
  onError: (cause: unknown) => E,
  make: () => Decoder<Uint8Array, O, E2>
): Channel.Channel<Arr.NonEmptyReadonlyArray<O>, E | E2> =>
  Channel.fromTransform((_upstream, scope) =>
    Effect.suspend(() => {
      const decoder = make()
      let ended = false
      // One listener for every event: what happened is read off the stream when the pull wakes.
      let wake: ((effect: Effect.Effect<void>) => void) | undefined
      const changed = () => {
        const resume = wake
        wake = undefined
        resume?.(Effect.void)
      }
      readable.on("readable", changed)
      readable.on("end", changed)
      readable.on("close", changed)
      // Stays after the channel ends: a late error of a destroyed body must not become unhandled.
      readable.on("error", changed)
      const waitForChange = Effect.callback<void>((resume) => {
        wake = resume
      })
      const read = (): SourceRead<O, E2, E> => {
        const errored = readable.errored
        if (errored !== null) return Effect.fail(onError(errored))
        let item = readable.read() as Uint8Array | null
        if (item !== null) {
          const items = [item]
          while ((item = readable.read() as Uint8Array | null) !== null) items.push(item)
          return decoder.push(items)
        }
        if (readable.readableEnded) {
          ended = true
          return decoder.end()
        }
        // Closed without `end` or an error of its own: someone destroyed it under us.
        if (readable.destroyed) return Effect.fail(onError(new Error("the response body closed before it ended")))
        return afterChange
      }
      const afterChange: Effect.Effect<DecodeStep<O, E2>, E> = Effect.flatMap(waitForChange, () => {
        const next = read()
        return Effect.isEffect(next) ? next : Effect.succeed(next)
      })
      const finalize = Effect.sync(() => {
        wake = undefined
        readable.off("readable", changed)
        readable.off("end", changed)
        readable.off("close", changed)
        if (readable.readableEnded) return
        if (fullyReceived(readable)) {
          // Nothing left to abort (the usual end of a model call: the consumer stops at the tool
          // call or `[DONE]`): reading out the rest ends the body cleanly, where `destroy` costs
          // an abort error with a formatted stack trace every call.
          while (readable.read() !== null) { /* not wanted */ }
        } else {
          readable.destroy()
        }
      })
      return Effect.as(Scope.addFinalizer(scope, finalize), stepPull<O, E2, E>(read, () => ended))
    })
  )
