import { Duration, Effect, Layer } from "effect"
import { ChannelQueue } from "../chat/ChannelQueue"
import { OpsConfig } from "../config/OpsConfig"

/**
 * Graceful shutdown of a front that serves many channels (the Discord bot): when its scope
 * closes (SIGTERM/SIGINT interrupt the program), the queue stops taking messages, running
 * replies get `SHUTDOWN_GRACE_MS` to finish, and what is still running then is stopped with
 * the stop mark. Built after the queue and the Discord client, so it runs before they close.
 */
export const gracefulDrainLayer: Layer.Layer<never, never, ChannelQueue | OpsConfig> = Layer.effectDiscard(
  Effect.gen(function*() {
    const queue = yield* ChannelQueue
    const { shutdownGrace } = yield* OpsConfig
    yield* Effect.addFinalizer(() =>
      Effect.gen(function*() {
        const busy = (yield* queue.busyChannels).length
        if (busy > 0) {
          yield* Effect.logInfo(`Shutting down: ${busy} channel(s) busy; replies may finish for up to ${Duration.format(shutdownGrace)}`)
        }
        const outcome = yield* queue.drain(shutdownGrace)
        if (outcome.stoppedChannels > 0) {
          yield* Effect.logWarning(`Shutting down: the grace period ran out; replies in ${outcome.stoppedChannels} channel(s) were stopped`)
        } else if (busy > 0) {
          yield* Effect.logInfo("Shutting down: every reply finished")
        }
      })
    )
  })
)
