import { Data } from "effect"

/** Which wire a connect attempt used. */
export type McpTransportKind = "smithery" | "streamable-http" | "sse" | "stdio"

/** Why one transport attempt failed. `http` carries the status the server answered. */
export type McpAttemptFailure =
  | { readonly transport: McpTransportKind; readonly reason: "timeout"; readonly detail: string }
  | { readonly transport: McpTransportKind; readonly reason: "http"; readonly status: number; readonly detail: string }
  | { readonly transport: McpTransportKind; readonly reason: "network" | "protocol"; readonly detail: string }

const describeAttempt = (attempt: McpAttemptFailure): string => `${attempt.transport}: ${attempt.detail}`

/**
 * Every transport attempt for a server failed. `message` lists each attempt's reason (for the
 * logs); `publicMessage` is what a guild may see: a reason would tell a port scanner which internal
 * ports answer (docs/architecture.md, Public notices carry no internals).
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

/**
 * A tool call failed below the tool level (tool errors are results, not this). The message
 * carries the detail (a network error, the server's words) for the logs; the model reads
 * `modelText`, the kind of failure only.
 */
export class McpCallError extends Data.TaggedError("McpCallError")<{
  readonly server: string
  readonly tool: string
  /** `too_large`: the answer outgrew the response cap (the stream was cut there). */
  readonly reason: "timeout" | "session_expired" | "transport" | "protocol" | "too_large"
  readonly detail: string
}> {
  override get message(): string {
    return `MCP tool '${this.tool}' on '${this.server}': ${this.detail}`
  }

  get modelText(): string {
    const kind = this.reason === "timeout"
      ? "timed out"
      : this.reason === "protocol"
      ? "the server answered with a protocol error"
      : this.reason === "session_expired"
      ? "the server dropped its session"
      : this.reason === "too_large"
      ? "its answer was too large"
      : "the connection to the server was lost (unreachable)"
    return `MCP tool '${this.tool}' on '${this.server}' failed: ${kind}`
  }
}
