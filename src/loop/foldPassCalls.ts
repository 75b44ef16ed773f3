import type { TurnStatus } from "../domain/PassResult"
import type { Sticker } from "../domain/Sticker"
import { preToolTextParts, ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { ToolCallRecord } from "../domain/TurnResult"
import type { PassCallOutcome } from "./runPassCalls"

/** What the calls of one pass add up to, folded in the model's order once all of them ended. */
export interface PassCallsFold {
  /** A call aborted the pass (a stop, a malformed call): nothing of the pass is replayed. */
  readonly abort: TurnStatus | undefined
  /** One entry per answered call, in the model's order; the pass's text on the first only. */
  readonly entries: ReadonlyArray<ToolHistoryEntry>
  readonly records: ReadonlyArray<ToolCallRecord>
  readonly consecutiveToolErrors: number
  /** Counted failures in a row of calls made after pre-tool text (a pass policy may retry them). */
  readonly failuresAfterText: number
  /** A call failed in a way that counts (not a checkpoint rejection, not a refusal past the cap). */
  readonly countedFailure: boolean
  /** Every call succeeded (a context restart counts as success). */
  readonly allSucceeded: boolean
  readonly endTurn: boolean
  readonly restarted: boolean
  readonly responseDelivered: boolean
  /** Latest successful pick in the model's order; else null when a pick missed; else undefined. */
  readonly stickerSelection: Sticker | null | undefined
  /** Every answered call is a silent write (`endsTurnAfterText`); false when none was answered. */
  readonly allEndTurnAfterText: boolean
  /** Names of the answered calls, in order (restarts included). */
  readonly names: ReadonlyArray<string>
  /** The last call whose failure counted, for the error-cap notice. */
  readonly lastFailedName: string | undefined
}

interface FoldStart {
  /** The pass number stamped on every entry (`ToolHistoryEntry.batch`). */
  readonly batch: number
  readonly preToolText: string
  readonly consecutiveToolErrors: number
  readonly failuresAfterText: number
  /** The pass showed (or withheld) text before its calls: its counted failures add to `failuresAfterText`. */
  readonly afterText: boolean
}

/**
 * Folds the outcomes of one pass's calls in the model's order (docs/architecture.md, "Tool calls
 * of one pass"): a counted failure adds one to the consecutive errors and a success resets them,
 * endTurn and restarts are noted for after the batch, and the pass's text goes on the first entry.
 */
export const foldPassCalls = (outcomes: ReadonlyArray<PassCallOutcome>, start: FoldStart): PassCallsFold => {
  const entries: Array<ToolHistoryEntry> = []
  const records: Array<ToolCallRecord> = []
  const names: Array<string> = []
  let abort: TurnStatus | undefined
  let errors = start.consecutiveToolErrors
  let failuresAfterText = start.failuresAfterText
  let countedFailure = false
  let allSucceeded = true
  let allEndTurnAfterText = true
  let endTurn = false
  let restarted = false
  let responseDelivered = false
  let picked: Sticker | undefined
  let missed = false
  let lastFailedName: string | undefined

  for (const { call, outcome, overCap } of outcomes) {
    switch (outcome._tag) {
      case "Abort":
        // A stop wins over any other abort: the user asked for it.
        if (abort === undefined || outcome.status === "stopped_by_user") abort = outcome.status
        allSucceeded = false
        break
      case "Restart":
        allEndTurnAfterText = false
        restarted = true
        errors = 0
        failuresAfterText = 0
        names.push(outcome.functionName)
        records.push({ name: outcome.functionName, args: call.args, success: true, response: null, durationMs: outcome.durationMs })
        break
      case "History": {
        const { historyEntry, success } = outcome
        const { preToolCallTextParts: _text, ...bare } = historyEntry
        const parts = entries.length === 0 ? preToolTextParts(start.preToolText) : undefined
        entries.push(ToolHistoryEntry({ ...bare, ...(parts === undefined ? {} : { preToolCallTextParts: parts }), batch: start.batch }))
        names.push(outcome.functionName)
        records.push({
          name: outcome.functionName,
          args: historyEntry.functionCall.args,
          success,
          response: historyEntry.functionResponse.response.result,
          durationMs: outcome.durationMs
        })
        // A checkpoint rejection or a refusal past the cap neither counts toward nor resets the cap.
        const counts = outcome.checkpointStatus !== "rejected" && !overCap
        if (success) {
          errors = 0
          failuresAfterText = 0
        } else if (counts) {
          errors += 1
          if (start.afterText) failuresAfterText += 1
          countedFailure = true
          lastFailedName = outcome.functionName
        }
        if (!success) allSucceeded = false
        if (!outcome.endsTurnAfterText) allEndTurnAfterText = false
        if (outcome.endTurn) endTurn = true
        if (outcome.responseDelivered) responseDelivered = true
        if (outcome.stickerSelection !== undefined) {
          if (outcome.stickerSelection === null) missed = true
          else picked = outcome.stickerSelection
        }
        break
      }
    }
  }

  return {
    abort,
    entries,
    records,
    consecutiveToolErrors: errors,
    failuresAfterText,
    countedFailure,
    allSucceeded,
    allEndTurnAfterText: allEndTurnAfterText && names.length > 0,
    endTurn,
    restarted,
    responseDelivered,
    stickerSelection: picked ?? (missed ? null : undefined),
    names,
    lastFailedName
  }
}
