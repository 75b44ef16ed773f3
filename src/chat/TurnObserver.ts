import { Context, type Effect } from "effect"
import type { TurnResult } from "../domain/TurnResult"
import type { TurnInput } from "./TurnInput"

export interface TurnObserverShape {
  /** Runs `turn` (one whole turn of `input`), observed: a span around it, metrics from its result. */
  readonly observe: <E, R>(input: TurnInput, turn: Effect.Effect<TurnResult, E, R>) => Effect.Effect<TurnResult, E, R>
}

/**
 * Watches every turn the TurnRunner runs (operations wires telemetry here, see
 * `src/ops/observedTurns.ts`). A Reference: without one, turns run as they are.
 */
export const TurnObserver = Context.Reference<TurnObserverShape>("loopcord/chat/TurnObserver", {
  defaultValue: () => ({ observe: (_input, turn) => turn })
})
