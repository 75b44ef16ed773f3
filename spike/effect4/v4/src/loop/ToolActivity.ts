import { Data } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"

/** A tool call as the front may show it. */
export type ToolActivity = Data.TaggedEnum<{
  Started: { readonly name: string; readonly args: ToolArgs | undefined }
  Finished: { readonly name: string; readonly success: boolean; readonly durationMs: number }
  Aborted: { readonly name: string }
}>

export const ToolActivity = Data.taggedEnum<ToolActivity>()
