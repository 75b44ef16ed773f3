import type { TurnEffectKind } from "../domain/TurnEffect"

/**
 * What a tool declares about how the loop must treat its calls. The loop reads these and never
 * the tool's name, so a new tool with the same needs declares them instead of adding a case.
 */
export interface ToolCapabilities {
  /**
   * A successful call spends the tool for the rest of the turn (every pass and attempt): it is
   * no longer declared, and a later call is refused without running. A failed call spends nothing.
   */
  readonly oncePerTurn?: boolean
  /**
   * The kind of turn effect this tool's results set (TurnEffect): the latest call wins, and a
   * call whose result carries none (a miss, a failure, a timeout) clears an earlier one.
   */
  readonly turnEffect?: TurnEffectKind
  /** Runs one at a time, in the model's order, when a pass makes several calls. */
  readonly sequential?: boolean
  /**
   * A silent write: when every call of a pass is one and succeeds after text the pass already
   * showed, that text is the answer and the turn ends (there is nothing to follow up).
   */
  readonly endsTurnAfterText?: boolean
}
