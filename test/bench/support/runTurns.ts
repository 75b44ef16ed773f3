/** Runs turns through a contender with at most `concurrency` in flight; returns them in order. */
import type { Contender, TurnHandle, TurnOutcome } from "./contender"

export interface FinishedTurn {
  readonly id: string
  readonly message: string
  readonly outcome: TurnOutcome
  readonly firstDeltaAt: number | undefined
}

export const runTurns = async (
  contender: Contender,
  turns: ReadonlyArray<{ readonly id: string; readonly message: string }>,
  concurrency: number
): Promise<Array<FinishedTurn>> => {
  const results: Array<FinishedTurn> = new Array(turns.length)
  let next = 0
  const worker = async () => {
    while (next < turns.length) {
      const index = next++
      const turn = turns[index]!
      const handle: TurnHandle = contender.start(turn.message)
      const outcome = await handle.done
      results[index] = { ...turn, outcome, firstDeltaAt: handle.firstDeltaAt() }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, turns.length) }, worker))
  return results
}

let counter = 0
/** Unique turn ids for one contender and scenario: `<tag><n>` (no `:` so the server can parse them). */
export const turnIds = (tag: string, count: number): Array<string> =>
  Array.from({ length: count }, () => `${tag}${++counter}`)
