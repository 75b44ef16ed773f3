import { Effect } from "effect"
import { CurrentTurn } from "../../loop/CurrentTurn"
import { type PassPolicy, PassVerdict } from "../../loop/PassPolicy"
import { ResponseSink } from "../../loop/ResponseSink"
import { UserNotice } from "../../loop/UserNotice"
import { ToolRegistry } from "../../tools/ToolRegistry"
import { setFlag } from "../../tools/TurnState"

/** Failures after pre-tool text in a row (this one included) after which the loop gives up. */
const NAI_TOOL_FAILURE_RETRY_THRESHOLD = 3

const novelAiRetryExhausted = (failures: number): boolean => failures >= NAI_TOOL_FAILURE_RETRY_THRESHOLD

const isBlank = (text: string) => text.trim().length === 0

/**
 * NovelAI's models narrate before a call and repeat that narration when they try again. So after
 * a pass that wrote pre-tool text (posted, or withheld on a retry): a failed call is retried with
 * the text withheld, and after 3 such failures in a row the turn ends with the text shown; calls
 * that all succeeded end the turn unless one requires a follow-up, which gets a pass that may
 * post text again.
 */
export const novelAiPassPolicy: PassPolicy = {
  withholdsText: (flags) => flags.suppressTextOutput,
  countsFailuresAfterText: (preToolText) => !isBlank(preToolText),
  afterCalls: (facts) =>
    Effect.gen(function*() {
      if (isBlank(facts.preToolText)) return PassVerdict.Continue()
      const turn = yield* CurrentTurn
      const { fold } = facts
      if (fold.countedFailure) {
        if (novelAiRetryExhausted(fold.failuresAfterText)) {
          if (turn.shouldSurfaceUserErrors) {
            yield* (yield* ResponseSink).notice(
              UserNotice.NovelAiToolRetryExhausted({ failures: fold.failuresAfterText, lastTool: fold.lastFailedName ?? "" })
            )
          }
          // The retries posted nothing: the answer is the text the user last saw.
          return PassVerdict.Conclude({ text: isBlank(facts.passText) ? facts.lastDelivered ?? "" : facts.passText })
        }
        yield* setFlag(turn.state, "suppressTextOutput", true)
        return PassVerdict.Retry()
      }
      if (!fold.allSucceeded) return PassVerdict.Continue()
      const registry = yield* ToolRegistry
      const needed = yield* Effect.forEach(fold.names, (name) => registry.requiresFollowUp(name, facts.provider, turn.guildId, turn.state))
      if (!needed.includes(true)) return PassVerdict.Conclude({ text: facts.passText })
      yield* setFlag(turn.state, "suppressTextOutput", false)
      return PassVerdict.Continue()
    })
}

