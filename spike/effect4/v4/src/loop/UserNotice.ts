import { Data } from "effect"

/** A notice the user sees beside the reply (the subset the ported code raises). */
export type UserNotice = Data.TaggedEnum<{
  StillWorking: { readonly iteration: number }
  MaxIterations: { readonly iterations: number }
  StreamTimeout: { readonly provider: string; readonly phase: "first_token" | "idle"; readonly personalKey?: true }
  ToolProgress: { readonly tool: string; readonly text: string }
}>

export const UserNotice = Data.taggedEnum<UserNotice>()
