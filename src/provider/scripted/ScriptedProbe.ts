import { Context, type Effect } from "effect"
import type { GenerationRequest } from "../GenerationRequest"

/** How a scripted pass ended, as seen by its stream finalizer. */
export type PassEnding =
  /** Every step was emitted and the stream ended on its own. */
  | "completed"
  /** The script failed the pass (a ProviderError step) or ran out. */
  | "failed"
  /** The consumer stopped pulling before the end (tool call, settle stop): the request is closed. */
  | "abandoned"
  /** The consuming fiber was interrupted (kill): the request is aborted. */
  | "interrupted"

/** One `stream` call the scripted provider served. */
export interface ScriptedCallRecord {
  readonly index: number
  readonly request: GenerationRequest
  /** Undefined while the stream is still open. */
  readonly ending: PassEnding | undefined
  /** Events emitted so far. */
  readonly emitted: number
}

/** What tests inspect about a scripted provider: every request and how each stream ended. */
export class ScriptedProbe extends Context.Service<ScriptedProbe, {
  /** Every request received, in order. */
  readonly requests: Effect.Effect<ReadonlyArray<GenerationRequest>>
  readonly calls: Effect.Effect<ReadonlyArray<ScriptedCallRecord>>
  /** Completes when the call with this index has started streaming. */
  readonly awaitCall: (index: number) => Effect.Effect<void>
  /** Completes when the stream of this call has run its finalizer. */
  readonly awaitFinalized: (index: number) => Effect.Effect<PassEnding>
}>()("loopcord/provider/scripted/ScriptedProbe") {}
