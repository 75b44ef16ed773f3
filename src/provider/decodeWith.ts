import { Channel, Chunk, type Effect, Stream } from "effect"

/** What one decoding step produces: elements to emit, then an optional effect (a log, or a failure). */
export interface DecodeStep<O, E> {
  readonly out: ReadonlyArray<O>
  /** Runs after `out` is emitted, so a failure never swallows the elements decoded before it. */
  readonly then?: Effect.Effect<void, E> | undefined
  /** Stop reading the upstream (its finalizers run, e.g. the HTTP response is released). */
  readonly done?: boolean | undefined
  /**
   * A further step, taken after `out` and `then` (unless `then` failed), before reading on:
   * lets fused decoders keep the order of the stages they replace.
   */
  readonly next?: (() => DecodeStep<O, E>) | undefined
}

/**
 * A decoder for one run of a stream. It may keep mutable state: `decodeWith` makes a fresh one
 * per run and only one fiber drives it, so nothing is shared.
 */
export interface Decoder<I, O, E> {
  readonly push: (input: Iterable<I>) => DecodeStep<O, E>
  readonly end: () => DecodeStep<O, E>
}

export const noOutput: DecodeStep<never, never> = { out: [] }

/**
 * The channel that emits one step: its elements, then its `then`, then its `next` step, then
 * `next` (the read of further input) unless the step is `done` or there is none. Shared by
 * `decodeWith` and by sources that decode what they read in their own channel.
 */
export const stepChannel = <O, E, InElem, InErr, InDone>(
  step: DecodeStep<O, E>,
  next: Channel.Channel<Chunk.Chunk<O>, InElem, E, InErr, unknown, InDone> | undefined
): Channel.Channel<Chunk.Chunk<O>, InElem, E, InErr, unknown, InDone> => {
  let channel: Channel.Channel<Chunk.Chunk<O>, InElem, E, InErr, unknown, InDone> = step.out.length > 0
    ? Channel.write(Chunk.fromArrayUnsafe(step.out as Array<O>))
    : Channel.void
  if (step.then !== undefined) channel = Channel.zipRight(channel, Channel.fromEffect(step.then))
  const further = step.next
  if (further !== undefined) return Channel.zipRight(channel, Channel.suspend(() => stepChannel(further(), next)))
  return step.done === true || next === undefined ? channel : Channel.zipRight(channel, next)
}

/**
 * Turns a chunk-at-a-time decoder into a Stream transformer. Work is per upstream chunk (one
 * TCP read carries many SSE frames), never per element, which keeps the hot path cheap.
 */
export const decodeWith = <I, O, E2>(make: () => Decoder<I, O, E2>) =>
<E, R>(self: Stream.Stream<I, E, R>): Stream.Stream<O, E | E2, R> =>
  Stream.pipeThroughChannel(
    self,
    Channel.suspend(() => {
      const decoder = make()
      const loop: Channel.Channel<Chunk.Chunk<O>, Chunk.Chunk<I>, E | E2, E, unknown, unknown> = Channel.readWithCause({
        onInput: (input: Chunk.Chunk<I>) => stepChannel(decoder.push(input), loop),
        onFailure: (cause) => Channel.failCause(cause),
        onDone: () => stepChannel(decoder.end(), undefined)
      })
      return loop
    })
  )
