import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SseError } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ListToolsResultSchema, McpError } from "@modelcontextprotocol/sdk/types.js"
import { Duration, Effect, Exit, Option, Ref } from "effect"
import { measureJson } from "./jsonBounds"
import type { McpAttemptFailure, McpTransportKind } from "./McpErrors"
import { type McpSession, type McpToolInfo, normalizeInputSchema, providerSafeName } from "./McpSession"
import { redactUrl } from "./serverLabel"

const CLIENT_INFO = { name: "loopcord", version: "0.1.0" } as const

/** One way of reaching a server. `open` runs under the attempt's deadline too (Smithery's upsert). */
export interface TransportAttempt {
  readonly kind: McpTransportKind
  readonly open: Effect.Effect<Transport, McpAttemptFailure>
}

/**
 * Bounds on what a server's `tools/list` may make us keep (docs/architecture.md, Bounds on
 * untrusted tool servers). Beyond a bound a tool is skipped or its description cut, with a warning;
 * discovery never keeps a list whole.
 */
export interface DiscoveryLimits {
  /** Pages read; a server looping on `nextCursor` stops here. */
  readonly maxPages: number
  /** Tools kept; reading stops once this many are kept. */
  readonly maxTools: number
  /** Characters of a description (longer ones are cut). */
  readonly descriptionMaxChars: number
  /** Serialized characters of an input schema (a larger one skips the tool). */
  readonly schemaMaxChars: number
  /** Nesting depth of an input schema (a deeper one skips the tool: nothing could serialize it safely). */
  readonly schemaMaxDepth: number
}

/** MCP tool names are at most 128 characters (2025-06-18 spec); a longer name skips the tool. */
const MAX_TOOL_NAME_CHARS = 128

/** Operator-configured servers are trusted with size, not with depth (that would crash a turn). */
export const GLOBAL_DISCOVERY_LIMITS: DiscoveryLimits = {
  maxPages: 20,
  maxTools: 10_000,
  descriptionMaxChars: 100_000,
  schemaMaxChars: 1_000_000,
  schemaMaxDepth: 64
}

const MAX_DETAIL_CHARS = 300

const errorCode = (cause: unknown): string | undefined => {
  const nested = cause instanceof Error && cause.cause instanceof Error ? cause.cause : undefined
  const code = nested !== undefined && "code" in nested ? nested.code : undefined
  return typeof code === "string" ? code : undefined
}

const shortText = (text: string): string =>
  text.length > MAX_DETAIL_CHARS ? `${text.slice(0, MAX_DETAIL_CHARS)}…` : text

/** Maps what the SDK threw to a typed attempt failure (HTTP status kept: it decides the SSE fallback). */
const classifyAttemptFailure = (transport: McpTransportKind, cause: unknown): McpAttemptFailure => {
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
const closeQuietly = (client: Client, transport: Transport): Effect.Effect<void> =>
  Effect.promise(() =>
    Promise.allSettled([client.close(), transport.close()]).then(() => undefined)
  )

const cutDescription = (text: string, maxChars: number): string =>
  text.length <= maxChars ? text : `${text.slice(0, Math.max(maxChars - 1, 0))}…`

interface Discovered {
  readonly tools: ReadonlyArray<McpToolInfo>
  readonly warnings: ReadonlyArray<string>
}

/**
 * Reads `tools/list` under `limits`. `client.request` rather than `client.listTools`: the
 * latter compiles and keeps a JSON-schema validator for every `outputSchema` of a page, which a
 * hostile page turns into unbounded memory and CPU.
 */
const discoverTools = (client: Client, transport: McpTransportKind, limits: DiscoveryLimits) =>
  Effect.gen(function* () {
    const tools: Array<McpToolInfo> = []
    const warnings: Array<string> = []
    const skipped = { names: 0, schemas: 0, descriptions: 0, beyondCap: 0 }
    const schemaSkips: Array<string> = []
    let cursor: string | undefined = undefined
    let pages = 0
    while (pages < limits.maxPages && tools.length < limits.maxTools) {
      const params: { cursor?: string } = cursor === undefined ? {} : { cursor }
      const result = yield* Effect.tryPromise({
        try: (signal) => client.request({ method: "tools/list", params }, ListToolsResultSchema, { signal }),
        catch: (cause) => classifyAttemptFailure(transport, cause)
      })
      pages++
      for (const tool of result.tools) {
        if (tools.length >= limits.maxTools) {
          skipped.beyondCap++
          continue
        }
        if (tool.name.length > MAX_TOOL_NAME_CHARS) {
          skipped.names++
          continue
        }
        const inputSchema = normalizeInputSchema(tool.inputSchema)
        const measured = measureJson(inputSchema, { maxChars: limits.schemaMaxChars, maxDepth: limits.schemaMaxDepth })
        if (!measured.ok) {
          skipped.schemas++
          // A few names for the log; a million bad tools must not become a million warnings.
          if (schemaSkips.length < 5) {
            schemaSkips.push(`'${tool.name}' (${measured.reason === "too_deep" ? `nested deeper than ${limits.schemaMaxDepth}` : `over ${limits.schemaMaxChars} characters`})`)
          }
          continue
        }
        const description = tool.description ?? tool.title ?? ""
        if (description.length > limits.descriptionMaxChars) skipped.descriptions++
        tools.push({
          mcpName: tool.name,
          declaredName: providerSafeName(tool.name),
          description: cutDescription(description, limits.descriptionMaxChars),
          inputSchema
        })
      }
      cursor = typeof result.nextCursor === "string" && result.nextCursor !== "" ? result.nextCursor : undefined
      if (cursor === undefined) break
    }
    if (skipped.schemas > 0) {
      warnings.push(`${skipped.schemas} tool(s) skipped for their input schema: ${schemaSkips.join(", ")}${skipped.schemas > schemaSkips.length ? ", …" : ""}`)
    }
    if (skipped.names > 0) warnings.push(`${skipped.names} tool(s) skipped: name longer than ${MAX_TOOL_NAME_CHARS} characters`)
    if (skipped.descriptions > 0) warnings.push(`${skipped.descriptions} description(s) cut to ${limits.descriptionMaxChars} characters`)
    if (skipped.beyondCap > 0 || (cursor !== undefined && tools.length >= limits.maxTools)) {
      warnings.push(`the server offers more than ${limits.maxTools} tools; only the first ${limits.maxTools} are kept`)
    } else if (cursor !== undefined) {
      warnings.push(`tools/list still had more pages after ${limits.maxPages}; the rest are skipped`)
    }
    return { tools, warnings } satisfies Discovered
  })

/**
 * One transport attempt with a **fresh** Client (re-using a client after a failed connect trips
 * the SDK's "Already connected to a transport" guard), bounded by `timeout` on the Effect Clock:
 * the SDK's own timeout covers only the initialize request, and an SSE server that never sends
 * its `endpoint` event leaves `connect()` pending forever. Whatever fails, the client is closed.
 */
export interface AttemptOptions {
  /** Connect and discovery together. */
  readonly timeout: Duration.Duration
  readonly limits: DiscoveryLimits
  /** The server's URL (none for stdio): its path and query are kept out of every message. */
  readonly target?: URL | undefined
}

export const runAttempt = (
  server: string,
  attempt: TransportAttempt,
  options: AttemptOptions
): Effect.Effect<McpSession, McpAttemptFailure> => {
  const { limits, target, timeout } = options
  const timeoutMs = Duration.toMillis(timeout)
  const redact = (text: string) => redactUrl(text, target)
  const connectAndDiscover = Effect.gen(function* () {
    const transport = yield* attempt.open
    const client = new Client(CLIENT_INFO, { capabilities: {} })
    const close = closeQuietly(client, transport)
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    const streamFailure = yield* Ref.make(Option.none<string>())
    client.onerror = (error) => {
      // The SDK leaves a request pending forever when the stream carrying its answer breaks
      // (cut off at the response cap, server gone): closing rejects every pending request now,
      // and the pool drops the session, so the next use reconnects.
      if (!isBrokenStream(error)) return
      const reason = shortText(redact(error.message))
      runFork(
        Ref.set(streamFailure, Option.some(reason)).pipe(
          Effect.andThen(Effect.logWarning(`MCP server '${server}': ${reason}; closing the connection`)),
          Effect.andThen(close)
        )
      )
    }
    const discovered = yield* Effect.tryPromise({
      // The SDK timer is a backstop only; the Effect deadline below is the one that counts.
      try: (signal) => client.connect(transport, { signal, timeout: Math.max(timeoutMs, 1) * 2 }),
      catch: (cause) => classifyAttemptFailure(attempt.kind, cause)
    }).pipe(
      Effect.andThen(discoverTools(client, attempt.kind, limits)),
      Effect.catch((failure) =>
        Effect.flatMap(Ref.get(streamFailure), (reason) =>
          Effect.fail(Option.isSome(reason) ? { transport: attempt.kind, reason: "network" as const, detail: reason.value } : failure)
        )
      ),
      Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : close))
    )
    for (const warning of discovered.warnings) yield* Effect.logWarning(`MCP server '${server}': ${warning}`)
    const session: McpSession = { server, transport: attempt.kind, client, tools: discovered.tools, close, streamFailure, redact }
    return session
  })
  return connectAndDiscover.pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail<McpAttemptFailure>({
          transport: attempt.kind,
          reason: "timeout",
          detail: `no answer within ${timeoutMs} ms`
        })
    }),
    Effect.mapError((failure): McpAttemptFailure => ({ ...failure, detail: redact(failure.detail) })),
    Effect.withSpan("Mcp.connectAttempt", { attributes: { server, transport: attempt.kind } })
  )
}
