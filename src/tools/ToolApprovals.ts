import { Context, Duration, Effect, Option } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import { toolFailure, type ToolResult } from "../domain/ToolResult"
import type { ToolSource } from "./Tool"

/**
 * Tools that wait for a human before they run (a server marks them with `/approvals`; the
 * terminal with `/approvals add`). The loop asks this port once, right before dispatch: whether
 * the call must wait, and if so to put the question. The wait itself (its deadline, /kill) is
 * the loop's; a front only asks and reports who answered.
 */

/** One tool call that may need a human's approval. */
export interface ApprovalRequest {
  /** As the model called it. */
  readonly toolName: string
  /** Aliases resolved. */
  readonly canonicalName: string
  /** Where the tool comes from (its MCP server), when the turn knows it. */
  readonly source: ToolSource | undefined
  readonly args: ToolArgs
  readonly guildId: string | undefined
  readonly channelId: string
  /** Who the reply is for: they may answer (and, on Discord, a Manage Server member). */
  readonly userId: string
  readonly messageId: string | undefined
}

export type ApprovalAnswer = "approved" | "denied"

/** How a wait ended: a human's answer, no answer in time, or /kill. */
export type ApprovalOutcome = ApprovalAnswer | "timed_out" | "stopped"

/** A question put to a human. */
export interface ApprovalPrompt {
  /** Completes with the first answer of someone allowed to give it (and who it was). */
  readonly answer: Effect.Effect<{ readonly answer: ApprovalAnswer; readonly by: string | undefined }>
  /** The question is over: show the outcome, take the buttons away. Never fails. */
  readonly close: (outcome: ApprovalOutcome, by: string | undefined) => Effect.Effect<void>
}

export interface ToolApprovalsShape {
  /** How long a call waits (`TOOL_APPROVAL_TIMEOUT_MS`); no answer by then is a denial. */
  readonly timeout: Duration.Duration
  /** Whether this call waits for a human. Never fails: settings that cannot be read mean it waits. */
  readonly required: (request: ApprovalRequest) => Effect.Effect<boolean>
  /** Puts the question; None when nobody can be asked (the call is then denied). */
  readonly ask: (request: ApprovalRequest) => Effect.Effect<Option.Option<ApprovalPrompt>>
}

/** No tool waits: the default wherever no front provides approvals. */
export const noApprovals: ToolApprovalsShape = {
  timeout: Duration.millis(120_000),
  required: () => Effect.succeed(false),
  ask: () => Effect.succeed(Option.none())
}

/** A Reference: the loop finds "no approvals" without wiring; a front provides its own. */
export const ToolApprovals = Context.Reference<ToolApprovalsShape>("loopcord/tools/ToolApprovals", {
  defaultValue: (): ToolApprovalsShape => noApprovals
})

/** What the model is told when a call was not approved: the status, never who or where. */
export const deniedByUser = (toolName: string, why: "denied" | "timed_out" | "unasked", timeout: Duration.Duration): ToolResult => {
  const reason = why === "denied"
    ? `The user denied this call of "${toolName}": it was not run. Do not call it again unless the user asks for it.`
    : why === "timed_out"
    ? `Nobody approved this call of "${toolName}" within ${Math.round(Duration.toSeconds(timeout))} s, so it was not run.`
    : `This call of "${toolName}" needs a human's approval and nobody could be asked, so it was not run.`
  return toolFailure(reason, { data: { status: "denied_by_user", functionName: toolName, reason } })
}

/** Whether a rule list (tool names, MCP server names; case-insensitive) covers the call. */
export const matchesApprovalRules = (
  rules: ReadonlyArray<{ readonly kind: "tool" | "mcp_server"; readonly name: string }>,
  request: Pick<ApprovalRequest, "toolName" | "canonicalName" | "source">
): boolean => {
  const tool = new Set([request.toolName.toLowerCase(), request.canonicalName.toLowerCase()])
  const server = request.source?.kind === "mcp" ? request.source.server.toLowerCase() : undefined
  return rules.some((rule) => (rule.kind === "tool" ? tool.has(rule.name.toLowerCase()) : server !== undefined && server === rule.name.toLowerCase()))
}
