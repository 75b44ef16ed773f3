import { Data } from "effect"

/** Which wire a connect attempt used. */
export type McpTransportKind = "smithery" | "streamable-http" | "sse" | "stdio"

/** Why one transport attempt failed. `http` carries the status the server answered. */
export type McpAttemptFailure =
  | { readonly transport: McpTransportKind; readonly reason: "timeout"; readonly detail: string }
  | { readonly transport: McpTransportKind; readonly reason: "http"; readonly status: number; readonly detail: string }
  | { readonly transport: McpTransportKind; readonly reason: "network" | "protocol"; readonly detail: string }

export const describeAttempt = (attempt: McpAttemptFailure): string => `${attempt.transport}: ${attempt.detail}`

/**
 * Every transport attempt for a server failed. `message` lists each attempt's reason (for the
 * logs); `publicMessage` is what a guild may see: a reason would tell a port scanner which
 * internal ports answer (design decision 13).
 */
export class McpConnectError extends Data.TaggedError("McpConnectError")<{
  readonly server: string
  readonly attempts: ReadonlyArray<McpAttemptFailure>
}> {
  override get message(): string {
    const tried = this.attempts.map(describeAttempt).join("; ")
    return `MCP server '${this.server}' is unreachable (${tried || "no transport could be tried"})`
  }
  get publicMessage(): string {
    return `MCP server '${this.server}' is unreachable`
  }
}

/** The circuit breaker holds this server back until `until` (epoch ms): no dial is made. */
export class McpQuarantinedError extends Data.TaggedError("McpQuarantinedError")<{
  readonly server: string
  readonly until: number
}> {
  override get message(): string {
    return `MCP server '${this.server}' failed to connect recently and is paused until ${new Date(this.until).toISOString()}`
  }
}

/** A guild server that is not (or no longer) registered and enabled. */
export class McpServerUnavailableError extends Data.TaggedError("McpServerUnavailableError")<{
  readonly server: string
  readonly detail: string
}> {
  override get message(): string {
    return this.detail
  }
}

export type McpSessionError = McpConnectError | McpQuarantinedError | McpServerUnavailableError

/** A tool call failed below the tool level (tool errors are results, not this). */
export class McpCallError extends Data.TaggedError("McpCallError")<{
  readonly server: string
  readonly tool: string
  readonly reason: "timeout" | "session_expired" | "transport" | "protocol"
  readonly detail: string
}> {
  override get message(): string {
    return `MCP tool '${this.tool}' on '${this.server}': ${this.detail}`
  }
}
