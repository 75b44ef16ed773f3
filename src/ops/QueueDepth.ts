import { Duration, Effect, Layer, Metric, Schedule } from "effect"
import { ChannelQueue } from "../chat/ChannelQueue"
import { Instrumentation } from "./Instrumentation"
import { queuedTurns } from "./metrics"

/** How often the waiting turns are counted for the queue-depth gauge. */
const QUEUE_SAMPLE_INTERVAL = Duration.seconds(5)

/** Samples how many turns wait in the channel queues into `loopcord_channel_queue_depth` (metrics on only). */
export const queueDepthLayer: Layer.Layer<never, never, ChannelQueue> = Layer.effectDiscard(
  Effect.gen(function*() {
    if (!(yield* Instrumentation).metrics) return
    const queue = yield* ChannelQueue
    const sample = Effect.gen(function*() {
      const busy = yield* queue.busyChannels
      const statuses = yield* Effect.forEach(busy, queue.status)
      yield* Metric.update(queuedTurns, statuses.reduce((sum, status) => sum + status.queued, 0))
    })
    yield* Effect.forkScoped(Effect.repeat(sample, Schedule.spaced(QUEUE_SAMPLE_INTERVAL)))
  })
)
