import { Effect } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import { operatorReason, type ToolResult } from "../domain/ToolResult"
import { failureDetails } from "../tools/toolFailureDetails"
import { ToolUsageStats } from "../tools/ToolUsageStats"
import { CurrentTurn } from "./CurrentTurn"
import { ThoughtLog } from "./ThoughtLog"

/**
 * After a call: the hidden notices (a failure; the trigger phrase that exposed the tool in
 * deliberate tool mode) and the usage stats of a call that ran in a server.
 */
export const reportToolCall = (input: {
  readonly name: string
  readonly canonicalName: string
  readonly args: ToolArgs | undefined
  readonly result: ToolResult
  readonly blocked: boolean
}) =>
  Effect.gen(function*() {
    const { blocked, canonicalName, name, result } = input
    const turn = yield* CurrentTurn
    const thoughtLog = yield* ThoughtLog
    if (result.success !== true) {
      yield* thoughtLog.post({
        kind: "tool_failed",
        severity: "error",
        title: `Tool failed: ${name}`,
        description: operatorReason(result),
        details: failureDetails(input.args, result.data),
        channelId: turn.channelId,
        guildId: turn.guildId
      })
    } else if (!blocked && !turn.isDM) {
      const stats = yield* ToolUsageStats
      // Detached so a slow or broken stats store never delays or fails the call. A daemon rather
      // than a child fiber: the caller may run this call in a short-lived fiber, which would
      // interrupt a child before the write lands. The store bounds the daemon's life itself
      // (ToolUsageStats contract; STORE_TIMEOUT_MS): a timeout here would fork two more fibers
      // per call for a bound the store already keeps.
      yield* Effect.forkDetach(
        Effect.catchCause(stats.record(canonicalName, turn.guildId), (cause) => Effect.logWarning("Recording tool usage failed", cause))
      )
    }
    const trigger = turn.deliberate.triggerMatchByToolName.get(name) ?? turn.deliberate.triggerMatchByToolName.get(canonicalName)
    if (turn.deliberate.active && trigger !== undefined && !blocked) {
      yield* thoughtLog.post({
        kind: "deliberate_trigger",
        severity: "info",
        title: `Deliberate tool mode: ${name}`,
        description: `Tool "${name}" was exposed by the trigger '${trigger.trigger.replaceAll("`", "'")}' (source: ${trigger.source}).`,
        channelId: turn.channelId,
        guildId: turn.guildId
      })
    }
  })
