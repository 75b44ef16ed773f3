import { Clock, Duration, Effect, type Fiber } from "effect"
import type { LoopSettings } from "../config/LoopConfig"

/**
 * The deadlines of one turn's passes and tool calls, watched by one sleeping fiber instead of a
 * timer fiber per pass and per call (a fork, a sleep and an interruption each). The calls of one
 * pass run together, so several deadlines may be armed at once; each fires on its own.
 *
 * The fiber never naps longer than the smallest budget that can be armed (`longestNap`), and
 * every deadline armed or moved is at least that far away when it is set (a whole budget from
 * then); so a new deadline never falls before the end of the current nap, and the alarm is
 * never late without having to be woken. With nothing armed when it wakes, the fiber ends; the
 * next arm starts another. It is a child of the fiber that armed first, and the turn's runner
 * stops it when the turn ends (a channel's worker fiber outlives its turns).
 */
export interface TurnAlarm {
  /**
   * Arms a deadline: `due` is read (Clock milliseconds) each time the alarm wakes, so the owner
   * may move it; `fire` is called once, from the alarm's fiber, when it has passed. Returns the
   * disarm (idempotent).
   */
  readonly arm: (due: () => number, napCapMs: number, fire: () => void) => Effect.Effect<() => void>
  /** Disarms and interrupts the sleeping fiber in the background: the turn is over. */
  readonly stop: Effect.Effect<void>
}

/** The longest nap the alarm may take: the smallest budget any pass or tool call arms. */
export const longestNap = (config: LoopSettings): number =>
  Math.min(
    Duration.toMillis(config.firstTokenTimeout),
    Duration.toMillis(config.streamInactivityTimeout),
    Duration.toMillis(config.toolExecutionTimeout)
  )

interface Armed {
  readonly due: () => number
  readonly napCapMs: number
  readonly fire: () => void
}

export const makeTurnAlarm = (): TurnAlarm => {
  const armed = new Set<Armed>()
  let watching: Fiber.Fiber<void> | undefined

  const watch: Effect.Effect<void> = Effect.gen(function*() {
    while (true) {
      if (armed.size === 0) {
        // In the same step as the check: an arm from now on starts another fiber.
        watching = undefined
        return
      }
      const now = yield* Clock.currentTimeMillis
      let nap = Number.POSITIVE_INFINITY
      for (const entry of [...armed]) {
        const due = entry.due()
        if (now >= due) {
          armed.delete(entry)
          entry.fire()
        } else {
          nap = Math.min(nap, due - now, entry.napCapMs)
        }
      }
      // An entry armed by a `fire` above is not in `nap` yet: look again at once.
      if (Number.isFinite(nap)) yield* Effect.sleep(Duration.millis(nap))
    }
  })

  const arm: TurnAlarm["arm"] = (due, napCapMs, fire) =>
    Effect.suspend(() => {
      const entry: Armed = { due, napCapMs, fire }
      armed.add(entry)
      const disarm = () => {
        armed.delete(entry)
      }
      if (watching !== undefined) return Effect.succeed(disarm)
      return Effect.map(Effect.forkChild(watch), (fiber) => {
        watching = fiber
        // However it ends (nothing armed, or its parent ended), the next arm starts another.
        fiber.addObserver(() => {
          if (watching === fiber) watching = undefined
        })
        return disarm
      })
    })

  const stop = Effect.withFiber<void>((self) => {
    armed.clear()
    watching?.interruptUnsafe(self.id)
    watching = undefined
    return Effect.void
  })

  return { arm, stop }
}
