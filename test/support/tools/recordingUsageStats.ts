import { Effect, Layer, Queue } from "effect"
import { ToolUsageStats } from "../../../src/tools/ToolUsageStats"

/**
 * ToolUsageStats that queues each `record` call. Recording is detached from the tool call, so
 * wait for an expected record with `next`, and check that none arrived with `pending` after
 * letting other fibers run.
 */
export interface RecordingUsageStats {
  readonly layer: Layer.Layer<ToolUsageStats>
  readonly next: Effect.Effect<{ readonly toolName: string; readonly guildId: string | undefined }>
  readonly pending: Effect.Effect<number>
}

export const makeRecordingUsageStats: Effect.Effect<RecordingUsageStats> = Effect.gen(function*() {
  const records = yield* Queue.unbounded<{ readonly toolName: string; readonly guildId: string | undefined }>()
  return {
    layer: Layer.succeed(ToolUsageStats, { record: (toolName, guildId) => Queue.offer(records, { toolName, guildId }) }),
    next: Queue.take(records),
    pending: Queue.size(records)
  }
})
