import { Duration, Effect } from "effect"
import { fetch as undiciFetch } from "undici"
import { capReadableStream } from "../../../fetch/ResponseSizeError"
import { SearchEngineError } from "./searchTypes"

export interface SearchHttpResponse {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly text: string
}

const describe = (cause: unknown): string =>
  cause instanceof Error ? (cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message) : String(cause)

/**
 * One request to an admin-configured search backend (not subject to the private-network
 * policy: the operator chose these URLs). Body capped, Clock deadline, interruption and the
 * turn's AbortSignal abort the request on the wire.
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
      const response = await undiciFetch(options.url, {
        method: options.method ?? "GET",
        headers: { "user-agent": "loopcord/0.1 (web_search)", ...options.headers },
        ...(options.body === undefined ? {} : { body: options.body }),
        signal: AbortSignal.any([interrupted, options.signal])
      })
      const body = response.body as ReadableStream<Uint8Array> | null
      const text =
        body === null
          ? ""
          : await new Response(
              capReadableStream(body, options.maxBytes, () => new Error(`response larger than ${options.maxBytes} bytes`))
            ).text()
      const headers = new Map<string, string>()
      response.headers.forEach((value, key) => headers.set(key, value))
      return { status: response.status, headers, text }
    },
    catch: (cause) => new SearchEngineError({ engine: options.engine, reason: `request failed: ${describe(cause)}` })
  }).pipe(
    Effect.timeoutFail({
      duration: options.timeout,
      onTimeout: () =>
        new SearchEngineError({ engine: options.engine, reason: `timed out after ${Duration.toMillis(options.timeout)} ms` })
    })
  )

/** Parses JSON or fails with the engine's name. */
export const parseJson = (engine: string, text: string): Effect.Effect<unknown, SearchEngineError> =>
  Effect.try({
    try: (): unknown => JSON.parse(text),
    catch: () => new SearchEngineError({ engine, reason: "the response is not JSON" })
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
