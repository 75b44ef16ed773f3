import { Context, Effect, Layer } from "effect"
import type { StopContext } from "./TurnSignals"

/**
 * Where a stop response goes: a /kill that carried a stop context gets an answer
 * turn queued at the **front** of the channel's queue. The ChannelQueue provides the real one
 * per turn; without a queue the request is only logged.
 */
export class StopResponses extends Context.Service<StopResponses, {
  readonly queue: (stop: StopContext) => Effect.Effect<void>
}>()("loopcord/loop/StopResponses") {
  static readonly none = Layer.succeed(StopResponses, {
    queue: (stop) => Effect.logInfo(`stop response requested by ${stop.requesterId}, but no channel queue is running`)
  })
}
