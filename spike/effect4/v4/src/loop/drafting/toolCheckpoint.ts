import { Data, Effect, Option } from "effect"
import type { ToolArgs } from "../../domain/FunctionCall"
import type { ToolResult } from "../../domain/ToolResult"
import { DraftReview } from "./DraftState"

/** What the checkpoint decided about a tool request before dispatch. */
export type Checkpoint = Data.TaggedEnum<{
  Dispatch: { readonly key: string | undefined }
  Reused: { readonly remembered: { readonly payload: unknown; readonly endTurn: boolean; readonly imageMetadata?: ToolResult["imageMetadata"] } }
  Rejected: { readonly rejection: { readonly reason: string } }
  Stopped: {}
}>

export const Checkpoint = Data.taggedEnum<Checkpoint>()

/**
 * Review mode only: before dispatch, a request goes to the reviewer. Ported: the look-up every
 * call makes when drafting is off. Not ported: the review (another model call), never on in the bench.
 */
export const toolCheckpoint = (_input: {
  readonly name: string
  readonly canonicalName: string
  readonly description: string | undefined
  readonly args: ToolArgs
  readonly narration: string
}): Effect.Effect<Checkpoint> =>
  Effect.gen(function*() {
    const found = yield* Effect.serviceOption(DraftReview)
    if (Option.isNone(found)) return Checkpoint.Dispatch({ key: undefined })
    return yield* Effect.die(new Error("Response Drafting is not ported in the Effect 4 spike"))
  })

/** After a dispatch the checkpoint let through: a success is remembered for reuse. */
export const rememberOutcome = (key: string | undefined, result: ToolResult, _payload: unknown): Effect.Effect<void> =>
  key === undefined || result.success !== true
    ? Effect.void
    : Effect.die(new Error("Response Drafting is not ported in the Effect 4 spike"))
