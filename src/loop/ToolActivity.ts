import { Data } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"

/**
 * A tool call as the front may show it (the terminal prints compact status lines; Discord may
 * ignore it). Not a user notice: it carries no copy, only what happened.
 */
export type ToolActivity = Data.TaggedEnum<{
  /** The model asked for `name`; it is about to be validated and dispatched. */
  Started: { readonly name: string; readonly args: ToolArgs | undefined }
  /** The call produced a result that is replayed to the model (or restarted the context). */
  Finished: { readonly name: string; readonly success: boolean; readonly durationMs: number }
  /** The call was abandoned (stop, malformed call): nothing is replayed. */
  Aborted: { readonly name: string }
}>

export const ToolActivity = Data.taggedEnum<ToolActivity>()
