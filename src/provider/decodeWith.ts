import { type Array as Arr, Cause, Effect, type Pull, Stream } from "effect"

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

/** What a source read for its decoder: the decoder's next step, or an effect that waits for one. */
export type SourceRead<O, E, EX> = DecodeStep<O, E> | Effect.Effect<DecodeStep<O, E>, EX>

/**
 * The pull of a decoder fed by `read`. Each pull emits the elements of one step; the step's
 * `then` runs at the next pull, then its `next` step, and only then is the source read again,
 * unless the step was `done` or the source ended (`ended()`: the decoder's end step was taken).
 * Shared by `decodeWith` and by sources that decode what they read in their own channel.
 */
export const stepPull = <O, E, EX>(
  read: () => SourceRead<O, E, EX>,
  ended: () => boolean
): Pull.Pull<Arr.NonEmptyReadonlyArray<O>, E | EX> => {
  let then: Effect.Effect<void, E> | undefined
  let further: (() => DecodeStep<O, E>) | undefined
  let stop = false
  const take = (step: DecodeStep<O, E>): Pull.Pull<Arr.NonEmptyReadonlyArray<O>, E | EX> => {
    then = step.then
    further = step.next
    stop = step.done === true
    return step.out.length > 0 ? Effect.succeed(step.out as Arr.NonEmptyReadonlyArray<O>) : pull
  }
  const pull: Pull.Pull<Arr.NonEmptyReadonlyArray<O>, E | EX> = Effect.suspend(() => {
    if (then !== undefined) {
      const effect = then
      then = undefined
      return Effect.andThen(effect, pull)
    }
    if (further !== undefined) {
      const step = further
      further = undefined
      return take(step())
    }
    if (stop || ended()) return Cause.done()
    const next = read()
    return Effect.isEffect(next) ? Effect.flatMap(next, take) : take(next)
  })
  return pull
}

/**
 * Turns a chunk-at-a-time decoder into a Stream transformer. Work is per upstream chunk (one
 * TCP read carries many SSE frames), never per element, which keeps the hot path cheap.
 */
export const decodeWith = <I, O, E2>(make: () => Decoder<I, O, E2>) =>
<E, R>(self: Stream.Stream<I, E, R>): Stream.Stream<O, E | E2, R> =>
  Stream.transformPull(self, (upstream) =>
    Effect.sync(() => {
      const decoder = make()
      let ended = false
      const endOfInput = Effect.sync(() => {
        ended = true
        return decoder.end()
      })
      const readUpstream: Effect.Effect<DecodeStep<O, E2>, E> = upstream.pipe(
        Effect.map((input) => decoder.push(input)),
        // The upstream's Done is the end of input: the decoder's end step comes next.
        Effect.catchIf(Cause.isDone, () => endOfInput)
      ) as Effect.Effect<DecodeStep<O, E2>, E>
      return stepPull<O, E2, E>(() => readUpstream, () => ended)
    }))
