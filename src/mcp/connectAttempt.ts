import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { McpError } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Exit, Option, Ref, Runtime } from "effect"
import type { McpAttemptFailure, McpTransportKind } from "./McpErrors"
import { type McpSession, type McpToolInfo, normalizeInputSchema, providerSafeName } from "./McpSession"

export const CLIENT_INFO = { name: "loopcord", version: "0.1.0" } as const

/** One way of reaching a server. `open` runs under the attempt's deadline too (Smithery's upsert). */
export interface TransportAttempt {
  readonly kind: McpTransportKind
  readonly open: Effect.Effect<Transport, McpAttemptFailure>
}

/** Tool discovery stops after this many pages (a server looping on `nextCursor` must not hang a turn). */
const MAX_TOOL_PAGES = 20
const MAX_DETAIL_CHARS = 300

const errorCode = (cause: unknown): string | undefined => {
  const nested = cause instanceof Error && cause.cause instanceof Error ? cause.cause : undefined
  const code = nested !== undefined && "code" in nested ? nested.code : undefined
  return typeof code === "string" ? code : undefined
}

const shortText = (text: string): string =>
  text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text

/** Maps what the SDK threw to a typed attempt failure (HTTP status kept: it decides the SSE fallback). */
export const classifyAttemptFailure = (transport: McpTransportKind, cause: unknown): McpAttemptFailure => {
  if ((cause instanceof StreamableHTTPError || cause instanceof SseError) && cause.code !== undefined && cause.code > 0) {
    return { transport, reason: "http", status: cause.code, detail: shortText(`HTTP ${cause.code}: ${cause.message}`) }
  }
  if (cause instanceof McpError) return { transport, reason: "protocol", detail: shortText(cause.message) }
  const message = cause instanceof Error ? cause.message : String(cause)
  const code = errorCode(cause)
  return { transport, reason: "network", detail: shortText(code === undefined ? message : `${message} (${code})`) }
}

/**
 * A response stream that broke mid-way (the SDK reports it only through `onerror`). A stream we
 * aborted ourselves (a killed or timed-out call) is not broken: the session stays usable.
 */
const isBrokenStream = (error: Error): boolean =>
  /exceeds the maximum allowed size/.test(error.message) ||
  (/SSE stream disconnected/.test(error.message) && !/AbortError|aborted/i.test(error.message))

/** Closes client and transport, swallowing errors: cleanup must never fail or block the caller's exit. */
export const closeQuietly = (client: Client, transport: Transport): Effect.Effect<void> =>
  Effect.promise(() =>
    Promise.allSettled([client.close(), transport.close()]).then(() => undefined)
  )

const listAllTools = (client: Client, transport: McpTransportKind) =>
  Effect.gen(function* () {
    const tools: Array<McpToolInfo> = []
    let cursor: string | undefined = undefined
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const params: { cursor?: string } = cursor === undefined ? {} : { cursor }
      const result = yield* Effect.tryPromise({
        try: (signal) => client.listTools(params, { signal }),
        catch: (cause) => classifyAttemptFailure(transport, cause)
      })
      for (const tool of result.tools) {
        tools.push({
          mcpName: tool.name,
          declaredName: providerSafeName(tool.name),
          description: tool.description ?? tool.title ?? "",
          inputSchema: normalizeInputSchema(tool.inputSchema)
        })
      }
      cursor = result.nextCursor
      if (cursor === undefined) break
    }
    return tools
  })

/**
 * One transport attempt with a **fresh** Client (re-using a client after a failed connect trips
 * the SDK's "Already connected to a transport" guard), bounded by `timeout` on the Effect Clock:
 * the SDK's own timeout covers only the initialize request, and an SSE server that never sends
 * its `endpoint` event leaves `connect()` pending forever. Whatever fails, the client is closed.
 */
export const runAttempt = (
  server: string,
  attempt: TransportAttempt,
  timeout: Duration.Duration
): Effect.Effect<McpSession, McpAttemptFailure> => {
  const timeoutMs = Duration.toMillis(timeout)
  const connectAndDiscover = Effect.gen(function* () {
    const transport = yield* attempt.open
    const client = new Client(CLIENT_INFO, { capabilities: {} })
    const close = closeQuietly(client, transport)
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const streamFailure = yield* Ref.make(Option.none<string>())
    client.onerror = (error) => {
      // The SDK leaves a request pending forever when the stream carrying its answer breaks
      // (cut off at the response cap, server gone): closing rejects every pending request now,
      // and the pool drops the session, so the next use reconnects.
      if (!isBrokenStream(error)) return
      const reason = shortText(error.message)
      runFork(
        Ref.set(streamFailure, Option.some(reason)).pipe(
          Effect.zipRight(Effect.logWarning(`MCP server '${server}': ${reason}; closing the connection`)),
          Effect.zipRight(close)
        )
      )
    }
    const tools = yield* Effect.tryPromise({
      // The SDK timer is a backstop only; the Effect deadline below is the one that counts.
      try: (signal) => client.connect(transport, { signal, timeout: Math.max(timeoutMs, 1) * 2 }),
      catch: (cause) => classifyAttemptFailure(attempt.kind, cause)
    }).pipe(
      Effect.zipRight(listAllTools(client, attempt.kind)),
      Effect.catchAll((failure) =>
        Effect.flatMap(Ref.get(streamFailure), (reason) =>
          Effect.fail(Option.isSome(reason) ? { transport: attempt.kind, reason: "network" as const, detail: reason.value } : failure)
        )
      ),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : close))
    )
    const session: McpSession = { server, transport: attempt.kind, client, tools, close, streamFailure }
    return session
  })
  return connectAndDiscover.pipe(
    Effect.timeoutFail({
      duration: timeout,
      onTimeout: (): McpAttemptFailure => ({
        transport: attempt.kind,
        reason: "timeout",
        detail: `no answer within ${timeoutMs} ms`
      })
    }),
    Effect.withSpan("Mcp.connectAttempt", { attributes: { server, transport: attempt.kind } })
  )
}
