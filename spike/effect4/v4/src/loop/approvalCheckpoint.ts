import { Data, Effect } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { ToolResult } from "../domain/ToolResult"
import { noApprovals, ToolApprovals } from "../tools/ToolApprovals"

/** What the approval checkpoint decided before dispatch. */
export type Approval = Data.TaggedEnum<{
  Approved: {}
  Denied: { readonly result: ToolResult }
  Stopped: {}
}>

export const Approval = Data.taggedEnum<Approval>()

/** Most calls: nothing to wait for (one value, no allocation per call). */
export const approved: Approval = Approval.Approved()

/**
 * The approval hook before dispatch. Ported: the path of every call where no front asks for
 * approvals (a Reference read). Not ported: asking a human (the wait races the answer, the
 * front's timeout and /kill); no bench front asks.
 */
export const approvalCheckpoint = (_name: string, _canonicalName: string, _args: ToolArgs): Effect.Effect<Approval> =>
  Effect.gen(function*() {
    const approvals = yield* ToolApprovals
    // No front asks for approvals (the terminal's --once, tests, embedding): nothing to look up.
    if (approvals === noApprovals) return approved
    return yield* Effect.die(new Error("asking for approval is not ported in the Effect 4 spike"))
  })
