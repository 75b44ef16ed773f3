import { Effect } from "effect"
import { FunctionCall, type ToolArgs } from "../domain/FunctionCall"
import { responsePayload } from "../domain/ToolHistoryEntry"
import { toolFailure } from "../domain/ToolResult"
import { failureDetails } from "../tools/toolFailureDetails"
import { CurrentTurn } from "./CurrentTurn"
import type { DispatchedCall } from "./DispatchedCall"
import { ThoughtLog } from "./ThoughtLog"
import { toolCallHistory } from "./toolCallHistory"
import { noTurnEffects } from "./turnEffects"

const isPlainObject = (value: unknown): value is ToolArgs => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

const kindOf = (value: unknown): string => (value === null ? "null" : Array.isArray(value) ? "an array" : `a ${typeof value}`)

/** The history outcome of a call refused before anything ran: a failure the model reads, never dispatched. */
const refusedOutcome = (replayedCall: FunctionCall, name: string, reason: string, accumulatedText: string) => {
  const result = toolFailure(reason)
  return toolCallHistory({
    name,
    replayedCall,
    result,
    payload: responsePayload(name, result),
    accumulatedText,
    turnEffects: noTurnEffects,
    durationMs: 0
  })
}

/** A call whose arguments the provider cut short is refused and reported as truncated; the partial arguments are never replayed. */
export const refuseTruncatedCall = (functionCall: FunctionCall, name: string, accumulatedText: string) =>
  Effect.gen(function*() {
    const turn = yield* CurrentTurn
    const recoveredKeys = Object.keys(functionCall.args ?? {})
    // Error level on purpose: truncation happens in production, where warnings are filtered out.
    yield* Effect.logError(`Refused tool call '${name}': the provider truncated its arguments`).pipe(
      Effect.annotateLogs({ errorType: "TOOL_ARGUMENTS_TRUNCATED", channelId: turn.channelId, recoveredKeys })
    )
    const reason = `The arguments of this "${name}" call were truncated by the provider mid-payload, so the call ` +
      `was refused: nothing was executed or updated. Reissue the complete call, with all of its arguments, in one message.`
    yield* (yield* ThoughtLog).post({
      kind: "tool_arguments_truncated",
      severity: "error",
      title: `Tool call refused: ${name} (arguments truncated)`,
      description: reason,
      details: failureDetails({}, { recoveredKeys }),
      channelId: turn.channelId,
      guildId: turn.guildId
    })
    return yield* refusedOutcome(FunctionCall({ ...functionCall, args: undefined }), name, reason, accumulatedText)
  })

/** A stop response declared no tools: a call it emits anyway is refused, never dispatched. */
export const refuseInStopResponse = (functionCall: FunctionCall, name: string, accumulatedText: string) =>
  Effect.andThen(
    Effect.logWarning(`Refused tool call '${name}' in a stop response: it only acknowledges the /kill`),
    refusedOutcome(
      functionCall,
      name,
      `Tool "${name}" was not run: this reply only acknowledges that the user stopped the previous one with /kill. ` +
        `Nothing was executed; do not call tools in it.`,
      accumulatedText
    )
  )

/**
 * The refusals decided before the drafting and approval checkpoints: arguments that are not a
 * JSON object, and (deliberate tool mode) a tool the trigger phrases did not expose. A message
 * that asked for no tool exposes none, so a call is refused then too. Undefined: go on.
 */
export const refusalBeforeDispatch = (functionCall: FunctionCall, name: string, canonicalName: string) =>
  Effect.gen(function*(): Effect.fn.Return<DispatchedCall | undefined, never, CurrentTurn> {
    const turn = yield* CurrentTurn
    const args = functionCall.args
    if (args !== undefined && !isPlainObject(args)) {
      const reason = `The arguments for tool "${name}" must be a JSON object of named parameters, but the call ` +
        `carried ${kindOf(args)}. Nothing was executed; call the tool again with an object of arguments.`
      yield* Effect.logWarning(`Refused tool call with non-object arguments: ${name}`)
      return { result: toolFailure(reason), replayedCall: FunctionCall({ ...functionCall, args: undefined }), blocked: false, raced: false, durationMs: 0 }
    }
    const allowed = turn.deliberate.allowedNames
    const noToolAsked = turn.deliberate.disableAllTools === true
    if (turn.deliberate.active && (noToolAsked || (allowed.length > 0 && !allowed.includes(name) && !allowed.includes(canonicalName)))) {
      yield* Effect.logWarning(`Tool '${name}' blocked by deliberate tool mode; allowed tools: ${noToolAsked ? "none (no trigger)" : allowed.join(", ")}`)
      const reason = `Tool "${name}" was not exposed for this deliberate tool mode turn.`
      const result = toolFailure(reason, {
        data: { status: "blocked_by_deliberate_tool_mode", functionName: name, allowedToolNames: [...allowed], reason }
      })
      return { result, replayedCall: functionCall, blocked: true, raced: false, durationMs: 0 }
    }
    return undefined
  })
