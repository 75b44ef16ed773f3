import { Clock, Duration, Effect } from "effect"

/** Discord shows "typing…" for about 10 s after each request: refresh a bit before it lapses. */
export const TYPING_REFRESH = Duration.seconds(8)

/**
 * Shows "is typing…" now and refreshes it every 8 s, skipping refreshes while reply text is
 * being written (a message showing up says enough, and a stale indicator would outlive the
 * reply). Runs until interrupted: the turn's scope ends it on every path, so it never sticks.
 * A failed typing request is only logged.
 */
export const keepTyping = (
  sendTyping: Effect.Effect<void, unknown>,
  lastWriteAt: Effect.Effect<number>,
  every: Duration.DurationInput = TYPING_REFRESH
): Effect.Effect<never> => {
  const interval = Duration.decode(every)
  const send = sendTyping.pipe(
    Effect.catchAllCause((cause) => Effect.logDebug("typing indicator request failed", cause))
  )
  const refresh = Effect.gen(function*() {
    yield* Effect.sleep(interval)
    const now = yield* Clock.currentTimeMillis
    if (now - (yield* lastWriteAt) >= Duration.toMillis(interval)) yield* send
  })
  return Effect.zipRight(send, Effect.forever(refresh))
}
