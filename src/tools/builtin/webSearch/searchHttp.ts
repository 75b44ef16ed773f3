import { Duration, Effect } from "effect"
import { fetch as undiciFetch, type Response as UndiciResponse } from "undici"
import { httpStatusClass, toolFailureClassText } from "../../../domain/ToolFailureClass"
import { capReadableStream } from "../../../fetch/ResponseSizeError"
import { SearchEngineError } from "./searchTypes"

interface SearchHttpResponse {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly text: string
}

/** Redirect hops one search request may take (each on the configured host). */
const SEARCH_MAX_REDIRECTS = 3

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])

const describe = (cause: unknown): string =>
  cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message) : String(cause)

/**
 * Whether a redirect may be followed with the request's headers (a search key among them): only
 * to the same host, and never from https down to http. A hop anywhere else is not followed at
 * all, so a backend's credential never reaches another origin.
 */
export const sameHostHop = (from: URL, to: URL): boolean =>
  (to.protocol === "http:" || to.protocol === "https:") &&
  to.hostname === from.hostname &&
  !(from.protocol === "https:" && to.protocol === "http:")

/** A status as the model may read it: the class, plus the engine's own failure words when it has some. */
export const statusFailure = (status: number): string => (status === 429 ? "rate limited" : httpStatusClass(status))

/**
 * One request to an admin-configured search backend (not subject to the private-network
 * policy: the operator chose these URLs). Redirects are followed by hand, on the same host
 * only (`sameHostHop`); the body is capped; a Clock deadline, interruption and the turn's
 * AbortSignal abort the request on the wire.
 */
export const searchHttp = (options: {
  readonly engine: string
  readonly url: URL
  readonly method?: "GET" | "POST"
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  readonly timeout: Duration.Duration
  readonly maxBytes: number
  readonly signal: AbortSignal
}): Effect.Effect<SearchHttpResponse, SearchEngineError> =>
  Effect.tryPromise({
    try: async (interrupted) => {
      const signal = AbortSignal.any([interrupted, options.signal])
      const headers = { "user-agent": "loopcord/0.1 (web_search)", ...options.headers }
      let url = options.url
      let method = options.method ?? "GET"
      let body = options.body
      let response: UndiciResponse
      for (let hops = 0; ; hops++) {
        response = await undiciFetch(url, { method, headers, ...(body === undefined ? {} : { body }), redirect: "manual", signal })
        if (!REDIRECTS.has(response.status)) break
        await response.body?.cancel().catch(() => undefined)
        const location = response.headers.get("location")
        if (location === null || !URL.canParse(location, url.href)) {
          throw new SearchEngineError({ engine: options.engine, failure: toolFailureClassText.bad_redirect, reason: `HTTP ${response.status} without a usable Location` })
        }
        const next = new URL(location, url.href)
        if (!sameHostHop(url, next)) {
          throw new SearchEngineError({
            engine: options.engine,
            failure: "redirected to another host (not followed)",
            reason: `HTTP ${response.status} to ${next.origin}, not followed: the request's credentials stay with ${url.origin}`
          })
        }
        if (hops + 1 > SEARCH_MAX_REDIRECTS) {
          throw new SearchEngineError({ engine: options.engine, failure: toolFailureClassText.too_many_redirects, reason: `more than ${SEARCH_MAX_REDIRECTS} redirects` })
        }
        if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === "POST")) {
          method = "GET"
          body = undefined
        }
        url = next
      }
      const stream = response.body as ReadableStream<Uint8Array> | null
      const text =
        stream === null
          ? ""
          : await new Response(
              capReadableStream(stream, options.maxBytes, () => new Error(`response larger than ${options.maxBytes} bytes`))
            ).text()
      const answered = new Map<string, string>()
      response.headers.forEach((value, key) => answered.set(key, value))
      return { status: response.status, headers: answered, text }
    },
    catch: (cause) =>
      cause instanceof SearchEngineError
        ? cause
        : new SearchEngineError({ engine: options.engine, failure: toolFailureClassText.unreachable, reason: `request failed: ${describe(cause)}` })
  }).pipe(
    Effect.timeoutOrElse({
      duration: options.timeout,
      orElse: () =>
        Effect.fail(new SearchEngineError({ engine: options.engine, failure: toolFailureClassText.timed_out, reason: `timed out after ${Duration.toMillis(options.timeout)} ms` }))
    })
  )

/** Parses JSON or fails with the engine's name. */
export const parseJson = (engine: string, text: string): Effect.Effect<unknown, SearchEngineError> =>
  Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: () => new SearchEngineError({ engine, failure: toolFailureClassText.bad_answer, reason: "the response is not JSON" })
  })

/** A field of an unknown JSON value, or undefined. */
export const field = (value: unknown, ...path: ReadonlyArray<string>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null || !(key in current)) return undefined
    current = (current as Record<string, unknown>)[key]
  }
  return current
}

export const arrayField = (value: unknown, ...path: ReadonlyArray<string>): ReadonlyArray<unknown> => {
  const found = field(value, ...path)
  return Array.isArray(found) ? found : []
}
