import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { createHash } from "node:crypto"
import { Effect, Option, Redacted, Ref, Schema } from "effect"
import type { SmitherySettings } from "../config/McpConfig"
import type { TransportAttempt } from "./connectAttempt"
import type { McpAttemptFailure } from "./McpErrors"

/** Smithery-hosted deployments live under `*.run.tools`; only those go through Smithery Connect. */
export const isSmitheryHosted = (url: URL): boolean => url.hostname.toLowerCase().endsWith(".run.tools")

/**
 * A stable connection id per upstream (URL and headers): re-connecting re-uses the same Smithery
 * connection instead of creating a new remote connection every time.
 */
export const smitheryConnectionId = (upstream: URL, headers: Readonly<Record<string, string>>): string => {
  const canonicalHeaders = Object.keys(headers)
    .sort()
    .map((name) => `${name.toLowerCase()}:${headers[name]}`)
    .join("\n")
  return `loopcord-${createHash("sha256").update(`${upstream.href}\n${canonicalHeaders}`).digest("hex").slice(0, 24)}`
}

const NamespaceList = Schema.Struct({ namespaces: Schema.Array(Schema.Struct({ name: Schema.String })) })
const CreatedNamespace = Schema.Struct({ name: Schema.String })

const MAX_DETAIL_CHARS = 200

/** Smithery Connect: the key goes to Smithery's origin and nowhere else. */
interface SmitheryConnector {
  readonly attempt: (upstream: URL, displayName: string, headers: Readonly<Record<string, string>>) => TransportAttempt
}

/**
 * `fetch` must be bound to Smithery's origin (the guarded fetch refuses any other origin), so
 * the bearer key cannot leave it even through a redirect or a hostile `endpoint` URL.
 */
export const makeSmitheryConnector = (settings: SmitherySettings, fetch: FetchLike): Effect.Effect<SmitheryConnector> =>
  Effect.gen(function* () {
    const cachedNamespace = yield* Ref.make(settings.namespace)
    const authorization = () => `Bearer ${Redacted.value(settings.apiKey)}`

    const failure = (detail: string): McpAttemptFailure => ({ transport: "smithery", reason: "network", detail })

    const request = (method: "GET" | "POST" | "PUT", path: string, body?: unknown) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(`${settings.baseUrl}${path}`, {
            method,
            signal,
            headers: {
              accept: "application/json",
              authorization: authorization(),
              ...(body === undefined ? {} : { "content-type": "application/json" })
            },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          })
          const text = await response.text()
          return { status: response.status, text }
        },
        // Smithery's error bodies are not echoed: they may quote the request.
        catch: (cause) => failure(`Smithery Connect ${method} ${path.split("/")[1] ?? ""} failed: ${cause instanceof Error ? cause.message : String(cause)}`.slice(0, MAX_DETAIL_CHARS))
      }).pipe(
        Effect.filterOrFail(
          (response) => response.status >= 200 && response.status < 300,
          (response): McpAttemptFailure => ({
            transport: "smithery",
            reason: "http",
            status: response.status,
            detail: `Smithery Connect answered HTTP ${response.status} to ${method} /${path.split("/")[1] ?? ""}`
          })
        )
      )

    const decodeJson = <S extends Schema.Codec<unknown, unknown>>(schema: S, text: string) =>
      Schema.decodeUnknownEffect(Schema.fromJsonString(schema))(text).pipe(
        Effect.mapError((): McpAttemptFailure => ({
          transport: "smithery",
          reason: "protocol",
          detail: "Smithery Connect sent an unexpected answer"
        }))
      )

    const namespace = Effect.gen(function* () {
      const known = yield* Ref.get(cachedNamespace)
      if (Option.isSome(known)) return known.value
      const listed = yield* request("GET", "/namespaces").pipe(Effect.flatMap((r) => decodeJson(NamespaceList, r.text)))
      const first = listed.namespaces[0]?.name
      const name =
        first ??
        (yield* request("POST", "/namespaces", {}).pipe(
          Effect.flatMap((r) => decodeJson(CreatedNamespace, r.text)),
          Effect.map((created) => created.name)
        ))
      yield* Ref.set(cachedNamespace, Option.some(name))
      return name
    })

    const attempt = (upstream: URL, displayName: string, headers: Readonly<Record<string, string>>): TransportAttempt => ({
      kind: "smithery",
      open: Effect.gen(function* () {
        const ns = encodeURIComponent(yield* namespace)
        const id = encodeURIComponent(smitheryConnectionId(upstream, headers))
        yield* request("PUT", `/connect/${ns}/${id}`, {
          mcpUrl: upstream.href,
          name: displayName,
          ...(Object.keys(headers).length > 0 ? { headers } : {})
        })
        return new StreamableHTTPClientTransport(new URL(`${settings.baseUrl}/connect/${ns}/${id}/mcp`), {
          fetch,
          requestInit: { headers: { authorization: authorization() } },
          reconnectionOptions: {
            initialReconnectionDelay: 1_000,
            maxReconnectionDelay: 30_000,
            reconnectionDelayGrowFactor: 1.5,
            maxRetries: 0
          }
        })
      })
    })

    return { attempt }
  })
