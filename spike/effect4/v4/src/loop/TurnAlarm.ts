import { Clock, Duration, Effect, type Fiber } from "effect"
import type { LoopSettings } from "../config/LoopConfig"

/**
 * The deadlines of one turn's passes and tool calls, watched by one sleeping fiber instead of a
 * timer fiber per pass and per call. Passes and tool calls of a turn run one after the other, so
 * one deadline is armed at a time. The fiber never naps longer than the smallest budget that can
 * be armed, and every deadline armed or moved is at least that far away when it is set, so the
 * alarm is never late without having to be woken. With nothing armed when it wakes, the fiber
 * ends; the next arm starts another.
 */
export interface TurnAlarm {
  readonly arm: (due: () => number, napCapMs: number, fire: () => void) => Effect.Effect<() => void>
  /** Disarms and interrupts the sleeping fiber: the turn is over. */
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
  let armed: Armed | undefined
  let watching: Fiber.Fiber<void> | undefined

  const watch: Effect.Effect<void> = Effect.gen(function*() {
    while (true) {
      const entry = armed
      if (entry === undefined) {
        watching = undefined
        return
      }
      const now = yield* Clock.currentTimeMillis
      if (now >= entry.due()) {
        armed = undefined
        entry.fire()
        continue
      }
      yield* Effect.sleep(Duration.millis(Math.min(entry.due() - now, entry.napCapMs)))
    }
  })

  const arm: TurnAlarm["arm"] = (due, napCapMs, fire) =>
    Effect.suspend(() => {
      const entry: Armed = { due, napCapMs, fire }
      armed = entry
      const disarm = () => {
        if (armed === entry) armed = undefined
      }
      if (watching !== undefined) return Effect.succeed(disarm)
      // v3 Effect.fork → v4 Effect.forkChild (still a child: interrupted when the arming fiber ends).
      return Effect.map(Effect.forkChild(watch), (fiber) => {
        watching = fiber
        fiber.addObserver(() => {
          if (watching === fiber) watching = undefined
        })
        return disarm
      })
    })

  // v3 withFiberRuntime + unsafeInterruptAsFork → v4 withFiber + interruptUnsafe (a sleeping fiber
  // is interrupted on this stack at once: the sleep's timer is cleared, nothing else runs).
  const stop = Effect.withFiber<void>((self) => {
    armed = undefined
    watching?.interruptUnsafe(self.id)
    watching = undefined
    return Effect.void
  })

  return { arm, stop }
}
