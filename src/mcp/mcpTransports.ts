import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect } from "effect"
import type { TransportAttempt } from "./connectAttempt"
import type { McpAttemptFailure } from "./McpErrors"

/** How an HTTP transport talks to its server. */
interface HttpTransportOptions {
  readonly url: URL
  /** Every request of the transport (POSTs, the SSE GET) goes through this fetch. */
  readonly fetch: FetchLike
  /** Extra request headers (a guild server's API key); sent to `url`'s origin only. */
  readonly headers: Readonly<Record<string, string>>
}

/** The transports never follow redirects themselves; the fetch decides (the guarded one refuses them). */
const requestInit = (options: HttpTransportOptions): RequestInit => ({ headers: { ...options.headers } })

export const streamableHttpAttempt = (options: HttpTransportOptions): TransportAttempt => ({
  kind: "streamable-http",
  open: Effect.sync(
    () =>
      new StreamableHTTPClientTransport(options.url, {
        fetch: options.fetch,
        requestInit: requestInit(options),
        // A dropped standalone GET stream is not worth background reconnect timers.
        reconnectionOptions: {
          initialReconnectionDelay: 1_000,
          maxReconnectionDelay: 30_000,
          reconnectionDelayGrowFactor: 1.5,
          maxRetries: 0
        }
      })
  )
})

export const sseAttempt = (options: HttpTransportOptions): TransportAttempt => ({
  kind: "sse",
  open: Effect.sync(
    () =>
      new SSEClientTransport(options.url, {
        fetch: options.fetch,
        requestInit: requestInit(options)
      })
  )
})

/** Operator-configured only (`MCP_SERVERS`): never built from user input. */
export const stdioAttempt = (command: string, args: ReadonlyArray<string>): TransportAttempt => ({
  kind: "stdio",
  open: Effect.try({
    try: () => new StdioClientTransport({ command, args: [...args], stderr: "inherit" }),
    catch: (cause): McpAttemptFailure => ({ transport: "stdio", reason: "network", detail: String(cause) })
  })
})

/** Streamable HTTP answered 4xx: the server may be a legacy SSE one (the SDK's documented fallback rule). */
export const isLegacyHint = (failure: McpAttemptFailure): boolean =>
  failure.reason === "http" && failure.status >= 400 && failure.status < 500
