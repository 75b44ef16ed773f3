import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Option, Ref } from "effect"
import type { ToolArgs } from "../domain/FunctionCall"
import { McpCallError } from "./McpErrors"
import type { McpCallOutput } from "./mcpResult"
import type { McpSession, McpToolInfo } from "./McpSession"
import { withRequestSignal } from "./requestSignal"

const MAX_DETAIL_CHARS = 300

/** The stream broke at the response cap (the guarded transport's own ResponseSizeError words). */
const cutAtCap = (reason: string): boolean => reason.includes("exceeds the maximum allowed size")

const short = (text: string) => (text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text)

/** A 404 on a session request means the server forgot the session (restart, expiry). */
const isSessionGone = (cause: unknown): boolean =>
  (cause instanceof StreamableHTTPError && cause.code === 404) ||
  (cause instanceof Error && /\(HTTP 404\)/.test(cause.message))

const classifyCallFailure = (session: McpSession, tool: McpToolInfo, cause: unknown): McpCallError => {
  const base = { server: session.server, tool: tool.mcpName }
  if (isSessionGone(cause)) return new McpCallError({ ...base, reason: "session_expired", detail: "the server no longer knows this session" })
  // Server text may echo the URL: its path and query never reach the model or the logs.
  if (cause instanceof McpError) {
    if (cause.code === ErrorCode.RequestTimeout) return new McpCallError({ ...base, reason: "timeout", detail: short(session.redact(cause.message)) })
    if (cause.code === ErrorCode.ConnectionClosed) return new McpCallError({ ...base, reason: "transport", detail: "the connection closed" })
    return new McpCallError({ ...base, reason: "protocol", detail: short(session.redact(cause.message)) })
  }
  const message = cause instanceof Error ? cause.message : String(cause)
  return new McpCallError({ ...base, reason: "transport", detail: short(session.redact(message)) })
}

/**
 * Calls one tool. `timeout` is enforced on the Effect Clock; on timeout, kill or interruption
 * the abort reaches the SDK (which sends `notifications/cancelled`) and the HTTP request that
 * carries the call (closed through `withRequestSignal`). A call is never replayed here.
 */
export const callMcpTool = (
  session: McpSession,
  tool: McpToolInfo,
  args: ToolArgs,
  options: { readonly timeout: Duration.Duration; readonly abortSignal?: AbortSignal }
): Effect.Effect<McpCallOutput, McpCallError> => {
  const timeoutMs = Duration.toMillis(options.timeout)
  return Effect.tryPromise({
    try: (interrupted) => {
      const signal = options.abortSignal === undefined ? interrupted : AbortSignal.any([interrupted, options.abortSignal])
      return withRequestSignal(signal, () =>
        session.client.callTool({ name: tool.mcpName, arguments: { ...args } }, undefined, {
          signal,
          // Backstop only (the SDK default is 60 s); the Effect deadline below is authoritative.
          timeout: Number.isFinite(timeoutMs) ? Math.max(timeoutMs, 1) * 2 : 24 * 3_600_000
        })
      )
    },
    catch: (cause) => classifyCallFailure(session, tool, cause)
  }).pipe(
    Effect.catch((error) =>
      Effect.flatMap(Ref.get(session.streamFailure), (reason) =>
        Effect.fail(
          Option.isSome(reason) && error.reason === "transport"
            ? new McpCallError({ server: error.server, tool: error.tool, reason: cutAtCap(reason.value) ? "too_large" : "transport", detail: reason.value })
            : error
        )
      )
    ),
    Effect.timeoutOrElse({
      duration: options.timeout,
      orElse: () =>
        Effect.fail(
          new McpCallError({
            server: session.server,
            tool: tool.mcpName,
            reason: "timeout",
            detail: `no result within ${Math.round(timeoutMs / 100) / 10} s`
          })
        )
    }),
    Effect.withSpan("Mcp.callTool", { attributes: { server: session.server, tool: tool.mcpName } })
  )
}
