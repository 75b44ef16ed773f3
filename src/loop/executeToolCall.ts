import { type Data, Effect } from "effect"
import type { PassResult } from "../domain/PassResult"
import type { ToolCallOutcome } from "../domain/ToolCallOutcome"
import type { AttemptInfo } from "./AttemptInfo"

export type FunctionCallPass = Data.TaggedEnum.Value<PassResult, "FunctionCall">

export interface ExecuteToolCallInput {
  readonly pass: FunctionCallPass
  /** Loop iteration index (0-based); sets `showKillHint` from the soft-warning iteration on. */
  readonly iteration: number
  readonly attempt: AttemptInfo
}

/**
 * Stage 02 of the pipeline: validate, gate, dispatch and record one tool call (seed 000, spec §3).
 * PLACEHOLDER: the foundation issue replaces this body; the signature is the contract.
 */
export const executeToolCall = (_input: ExecuteToolCallInput): Effect.Effect<ToolCallOutcome> =>
  Effect.dieMessage("executeToolCall is not implemented yet")
