import type { SendableChannels } from "discord.js"
import { Duration, Effect, Option } from "effect"
import { inLane } from "./budgetedRest"
import { type RequestBudgetService, reserveWithin } from "./RequestBudget"

/** Discord shows "typing…" for about 10 s after each request: refresh a bit before it lapses. */
export const TYPING_REFRESH = Duration.seconds(8)

/** A typing request that waits longer than this for the request budget is skipped (it would show too late). */
const TYPING_PATIENCE = Duration.seconds(1)

/**
 * Shows "is typing…" now and refreshes it every 8 s while nothing of the reply is visible yet;
 * once a message shows, the indicator has done its work and the fiber ends (a stale indicator
 * would outlive the reply, and every request counts toward the global limit). The turn's scope
 * ends it on every path, so it never sticks. A failed typing request is only logged.
 */
export const keepTyping = (
  sendTyping: Effect.Effect<void, unknown>,
  nothingVisible: Effect.Effect<boolean>,
  every: Duration.Input = TYPING_REFRESH
): Effect.Effect<void> => {
  const interval = Duration.fromInputUnsafe(every)
  const send = sendTyping.pipe(
    Effect.catchCause((cause) => Effect.logDebug("typing indicator request failed", cause))
  )
  return Effect.gen(function*() {
    while (yield* nothingVisible) {
      yield* send
      yield* Effect.sleep(interval)
    }
  })
}

/**
 * One typing request as background work: skipped while reply text waits for the request
 * budget (replies go first) or when no slot comes within TYPING_PATIENCE.
 */
export const budgetedTyping = (budget: RequestBudgetService, channel: Pick<SendableChannels, "sendTyping">): Effect.Effect<void, unknown> =>
  Effect.gen(function*() {
    if ((yield* budget.replyBacklog) > 0) return yield* Effect.logDebug("typing skipped: replies wait for the request budget")
    yield* Effect.acquireUseRelease(
      Effect.interruptible(reserveWithin(budget, "background", TYPING_PATIENCE)),
      Option.match({
        onNone: () => Effect.logDebug("typing skipped: no request slot in time"),
        onSome: (slot) => Effect.tryPromise({ try: () => inLane("background", slot, () => channel.sendTyping()), catch: (error) => error })
      }),
      Option.match({ onNone: () => Effect.void, onSome: (slot) => slot.release })
    )
  })
