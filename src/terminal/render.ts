import type { ToolArgs } from "../domain/FunctionCall"
import type { ToolActivity } from "../loop/ToolActivity"
import { failureClassText } from "../loop/FailureClass"
import { UserNotice } from "../loop/UserNotice"

/** Pure rendering of what the terminal shows besides the reply text (unit-tested). */

const ARGS_PREVIEW = 80

const preview = (args: ToolArgs | undefined): string => {
  if (args === undefined || Object.keys(args).length === 0) return ""
  const json = JSON.stringify(args) ?? ""
  return json.length <= ARGS_PREVIEW ? ` ${json}` : ` ${json.slice(0, ARGS_PREVIEW - 1)}…`
}

export const renderNotice = (notice: UserNotice): string =>
  UserNotice.$match(notice, {
    StillWorking: ({ iteration }) => `… still working (step ${iteration}); press Ctrl-C to stop`,
    MaxIterations: ({ iterations }) => `⚠ stopped after ${iterations} tool steps without a final answer; try rephrasing or starting fresh`,
    ToolErrorLoop: ({ failures, lastTool }) => `⚠ ${failures} tool calls in a row failed (last: ${lastTool}); the reply was ended`,
    NovelAiToolRetryExhausted: ({ failures, lastTool }) => `⚠ ${lastTool} failed ${failures} times after the reply began; the reply was left as it is`,
    StreamTimeout: ({ personalKey, phase, provider }) =>
      (phase === "first_token" ? `⚠ ${provider} sent nothing before the first-token timeout` : `⚠ ${provider} stopped streaming (inactivity timeout)`) +
      (personalKey === true ? " (on your own API key: check your provider account)" : ""),
    FallbackUsed: ({ failures, model }) =>
      `↪ answered by ${model} after ${failures.map((failure) => `${failure.model}: ${failureClassText[failure.reason]}`).join("; ")}`,
    ProviderFailed: ({ model, reason }) => `✗ the model could not answer (${model}: ${failureClassText[reason]}); details are in the log`,
    ServerRouteRefused: ({ reason, retryAfterMs }) =>
      `⚠ the server's key was not used: ${reason.replace(/_/g, " ")}${retryAfterMs === undefined ? "" : ` (retry in ${Math.ceil(retryAfterMs / 1000)} s)`}`,
    MessageShortened: ({ keptChars, totalChars }) =>
      `⚠ your message is longer than the model can read at once: it saw the start and the end (${keptChars} of ${totalChars} characters)`,
    Stopped: () => "⏹ stopped",
    ToolProgress: ({ text, tool }) => `  ${tool}: ${text}`
  })

/** A tool call as a compact status line (Started prints the head, Finished completes it). */
export const renderToolActivity = (activity: ToolActivity): string => {
  switch (activity._tag) {
    case "Started":
      return `⚙ ${activity.name}${preview(activity.args)}`
    case "Finished":
      return activity.success ? `✓ ${activity.durationMs} ms` : `✗ failed (${activity.durationMs} ms)`
    case "Aborted":
      return "⏹ abandoned"
  }
}

/** Dims a status line on a colour terminal. */
export const dim = (text: string, colour: boolean): string => (colour ? `\u001b[2m${text}\u001b[22m` : text)
