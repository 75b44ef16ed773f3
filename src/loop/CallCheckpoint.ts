import { Context, Data, Effect, Option } from "effect"
import type { LoopConfig } from "../config/LoopConfig"
import type { ToolArgs } from "../domain/FunctionCall"
import type { ImageMetadata } from "../domain/ImageMetadata"
import type { ToolResult } from "../domain/ToolResult"
import type { CurrentTurn } from "./CurrentTurn"
import type { ThoughtLog } from "./ThoughtLog"
import type { TurnSignals } from "./TurnSignals"

/** A call that already succeeded this turn: an identical one is answered with this, not run again. */
interface RememberedCall {
  readonly payload: unknown
  readonly endTurn: boolean
  readonly imageMetadata?: ImageMetadata
}

/** A refused call: `reason` for the operators; the whole object is the model's payload. */
interface CallRefusal {
  readonly reason: string
}

/** What a checkpoint decided about a call before dispatch. */
export type Checkpoint = Data.TaggedEnum<{
  /** Run it; `key` is handed back after the dispatch (undefined: nothing to remember). */
  Dispatch: { readonly key: string | undefined }
  /** An identical call already succeeded this turn: its outcome is replayed, nothing runs. */
  Reused: { readonly remembered: RememberedCall }
  /** Refused (now or earlier for the identical call): nothing runs. */
  Rejected: { readonly rejection: CallRefusal }
  /** /kill while the checkpoint decided. */
  Stopped: {}
}>

export const Checkpoint = Data.taggedEnum<Checkpoint>()

interface CheckpointInput {
  readonly name: string
  readonly canonicalName: string
  readonly description: string | undefined
  readonly args: ToolArgs
  /** Text the pass wrote before its calls. */
  readonly narration: string
}

/**
 * A look at each call before it runs, provided by a loop hook around the calls of a pass
 * (docs/architecture.md, "Loop core and its hooks"). Absent: every call is dispatched.
 */
export class CallCheckpoint extends Context.Service<CallCheckpoint, {
  readonly before: (input: CheckpointInput) => Effect.Effect<Checkpoint, never, CurrentTurn | ThoughtLog | TurnSignals | LoopConfig>
  /** After a dispatch the checkpoint let through (with its key). */
  readonly after: (key: string | undefined, result: ToolResult, payload: unknown) => Effect.Effect<void>
}>()("loopcord/loop/CallCheckpoint") {}

const dispatchAll = Checkpoint.Dispatch({ key: undefined })

export const callCheckpoint = (input: CheckpointInput) =>
  Effect.flatMap(Effect.serviceOption(CallCheckpoint), (found) =>
    Option.match(found, { onNone: () => Effect.succeed<Checkpoint>(dispatchAll), onSome: (checkpoint) => checkpoint.before(input) }))

export const rememberCallOutcome = (key: string | undefined, result: ToolResult, payload: unknown): Effect.Effect<void> =>
  key === undefined
    ? Effect.void
    : Effect.flatMap(Effect.serviceOption(CallCheckpoint), (found) =>
      Option.match(found, { onNone: () => Effect.void, onSome: (checkpoint) => checkpoint.after(key, result, payload) }))
