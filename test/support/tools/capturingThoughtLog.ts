import { Effect, Layer, Ref } from "effect"
import { type HiddenNotice, ThoughtLog } from "../../../src/loop/ThoughtLog"

/** A ThoughtLog that keeps every hidden notice in order; read them with `notices`. */
export interface CapturingThoughtLog {
  readonly layer: Layer.Layer<ThoughtLog>
  readonly notices: Effect.Effect<ReadonlyArray<HiddenNotice>>
}

export const makeCapturingThoughtLog: Effect.Effect<CapturingThoughtLog> = Effect.gen(function*() {
  const notices = yield* Ref.make<ReadonlyArray<HiddenNotice>>([])
  return {
    layer: Layer.succeed(ThoughtLog, { post: (notice) => Ref.update(notices, (all) => [...all, notice]) }),
    notices: Ref.get(notices)
  }
})
