import { Data, Effect, Option, Ref } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import type { ToolResult } from "../domain/ToolResult"
import { type ApprovalOutcome, type ApprovalRequest, deniedByUser, noApprovals, ToolApprovals } from "../tools/ToolApprovals"
import type { ToolSource } from "../tools/Tool"
import { ToolRegistry } from "../tools/ToolRegistry"
import { CurrentTurn } from "./CurrentTurn"
import { TurnSignals } from "./TurnSignals"

/** What the approval checkpoint decided before dispatch. */
type Approval = Data.TaggedEnum<{
  /** Run it (no approval needed, or a human approved it). */
  Approved: {}
  /** Not run: the model gets this result (`denied_by_user`). */
  Denied: { readonly result: ToolResult }
  /** /kill during the wait. */
  Stopped: {}
}>

const Approval = Data.taggedEnum<Approval>()

/** Most calls: nothing to wait for (one value, no allocation per call). */
export const approved: Approval = Approval.Approved()

/** Where the called tool comes from: a registered tool, else one of the guild tools this turn declared. */
const sourceOf = (name: string, canonicalName: string) =>
  Effect.gen(function*() {
    const registered = yield* (yield* ToolRegistry).get(name)
    if (Option.isSome(registered)) return Option.some(registered.value.source)
    const turn = yield* CurrentTurn
    const guild = turn.state.guildTools === undefined ? Option.none() : yield* Ref.get(turn.state.guildTools)
    return Option.flatMap(guild, ({ set }) =>
      Option.fromNullishOr(set.tools.find((tool) => tool.name === name || tool.name === canonicalName)).pipe(Option.map((tool) => tool.source)))
  }).pipe(Effect.map(Option.getOrUndefined<ToolSource>))

/**
 * The approval hook before dispatch: a call the front marks as needing approval waits for a
 * human's answer, at most the front's timeout on the Effect Clock, and yields to /kill. The
 * tool's own timeout starts only once it is approved (dispatch starts it). A call nobody can be
 * asked about, or nobody answers in time, is denied.
 */
export const approvalCheckpoint = (name: string, canonicalName: string, args: ToolArgs): Effect.Effect<Approval, never, ToolRegistry | CurrentTurn | TurnSignals> =>
  Effect.gen(function*() {
    const approvals = yield* ToolApprovals
    // No front asks for approvals (the terminal's --once, tests, embedding): nothing to look up.
    if (approvals === noApprovals) return approved
    const turn = yield* CurrentTurn
    const request: ApprovalRequest = {
      toolName: name,
      canonicalName,
      source: yield* sourceOf(name, canonicalName),
      args,
      guildId: turn.guildId,
      channelId: turn.channelId,
      userId: turn.userId,
      messageId: turn.messageId
    }
    if (!(yield* approvals.required(request))) return approved
    const prompt = yield* approvals.ask(request)
    if (Option.isNone(prompt)) {
      yield* Effect.logWarning(`Tool '${name}' needs approval and nobody could be asked: denied`)
      return Approval.Denied({ result: deniedByUser(name, "unasked", approvals.timeout) })
    }
    const signals = yield* TurnSignals
    type Waited = { readonly outcome: ApprovalOutcome; readonly by: string | undefined }
    const waited = yield* Effect.raceAll<Effect.Effect<Waited>>([
      prompt.value.answer.pipe(Effect.map(({ answer, by }): Waited => ({ outcome: answer, by }))),
      Effect.as(Effect.sleep(approvals.timeout), { outcome: "timed_out", by: undefined } satisfies Waited),
      Effect.as(signals.awaitKill, { outcome: "stopped", by: undefined } satisfies Waited)
    ]).pipe(Effect.onInterrupt(() => prompt.value.close("stopped", undefined)))
    yield* prompt.value.close(waited.outcome, waited.by)
    yield* Effect.logInfo(`Tool '${name}' approval: ${waited.outcome}`)
    return waited.outcome === "approved"
      ? approved
      : waited.outcome === "stopped"
      ? Approval.Stopped()
      : Approval.Denied({ result: deniedByUser(name, waited.outcome === "denied" ? "denied" : "timed_out", approvals.timeout) })
  })
