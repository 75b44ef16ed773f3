import { Effect } from "effect"
import type { FunctionCall } from "../domain/FunctionCall"
import { ToolCallOutcome } from "../domain/ToolCallOutcome"
import { preToolTextParts, ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { ToolResult } from "../domain/ToolResult"
import type { AppliedTurnEffects } from "./turnEffects"

/** Everything the history outcome of one call is built from. */
interface ToolCallHistoryInput {
  readonly name: string
  /** The call as it is replayed to the model (arguments cleared when they could not be used). */
  readonly replayedCall: FunctionCall
  readonly result: ToolResult
  /** The function response the model reads on the next pass. */
  readonly payload: unknown
  /** Text the model wrote before the call in the same pass (kept with the call when not blank). */
  readonly accumulatedText: string
  readonly turnEffects: AppliedTurnEffects
  readonly durationMs: number
  /** The tool's `endsTurnAfterText` capability. */
  readonly endsTurnAfterText?: boolean
}

/** The paired call and response replayed on the next pass (the response named as the model sent it), and the outcome. */
export const toolCallHistory = (input: ToolCallHistoryInput) =>
  Effect.gen(function*() {
    const { name, replayedCall, result } = input
    const preToolCallTextParts = preToolTextParts(input.accumulatedText)
    if (preToolCallTextParts !== undefined) {
      yield* Effect.logInfo(`Keeping ${input.accumulatedText.length} characters of pre-tool text with the '${name}' call`)
    }
    const success = result.success === true
    const historyEntry = ToolHistoryEntry({
      functionCall: replayedCall,
      functionResponse: { name: replayedCall.name, response: { result: input.payload } },
      ...(result.imageMetadata === undefined ? {} : { imageMetadata: result.imageMetadata }),
      ...(preToolCallTextParts === undefined ? {} : { preToolCallTextParts })
    })
    return ToolCallOutcome.History({
      functionName: name,
      success,
      endTurn: result.endTurn === true,
      endsTurnAfterText: input.endsTurnAfterText === true,
      responseDelivered: success && result.responseDelivered === true,
      ...input.turnEffects,
      historyEntry,
      durationMs: input.durationMs
    })
  })
