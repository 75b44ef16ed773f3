/**
 * A WHATWG-`fetch`-compatible function that only talks to addresses the AddressPolicy accepted, for
 * callers that need a plain `fetch` (the MCP SDK transports' `fetch` option).
 *
 * ```ts
 * makeGuardedFetch(options?: GuardedFetchOptions): Effect<GuardedFetch, never, AddressPolicy | SocketConnector>
 *
 * type GuardedFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>
 *
 * interface GuardedFetchOptions {
 *   sameOrigin?: string | URL     // refuse any request outside this origin (scheme, host, port)
 *   maxResponseBytes?: number     // body cap after decompression (guild MCP: 8 MiB, 2 MiB for control POSTs); unset = no cap
 * }
 * ```
 *
 * Per request: the URL is validated by `AddressPolicy.validate` (http/https only, no
 * credentials, every resolved address judged), the connection goes to the validated addresses
 * only (DNS pinned, IP literals included), redirects are never followed (`redirect: "error"`
 * semantics: every 3xx rejects), the caller's `AbortSignal` aborts the request and the body, and a
 * body past `maxResponseBytes` errors the stream and stops the download.
 *
 * Rejections: `UrlPolicyError` (refused URL), `GuardedFetchError` (`ORIGIN_MISMATCH`,
 * `REDIRECT_REFUSED`, `REQUEST_FAILED`), the signal's abort reason when aborted; body reads
 * fail with `ResponseSizeError` past the cap. The returned `Response` is a global `Response`.
 */
import { Cause, Data, Effect, Exit, Option } from "effect"
import { fetch as undiciFetch } from "undici"
import { AddressPolicy } from "./AddressPolicy"
import { makePinnedDispatcher } from "./pinnedDispatcher"
import { capReadableStream, ResponseSizeError } from "./ResponseSizeError"
import { SocketConnector } from "./SocketConnector"

type GuardedFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

export interface GuardedFetchOptions {
  /** Refuse every request whose origin (scheme, host, port) differs from this one. */
  readonly sameOrigin?: string | URL
  /** Cap on response body bytes, counted after decompression. Unset: no cap. */
  readonly maxResponseBytes?: number
}

export class GuardedFetchError extends Data.TaggedError("GuardedFetchError")<{
  readonly code: "ORIGIN_MISMATCH" | "REDIRECT_REFUSED" | "REQUEST_FAILED"
  readonly url: string
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `Request to ${this.url} refused: ${this.reason}`
  }
}

const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])
const NULL_BODY_STATUSES: ReadonlySet<number> = new Set([101, 103, 204, 205, 304])

/** The origin only: an MCP server's path or query may hold its API key. */
const describe = (url: URL): string => url.origin

const errorText = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
  return `${cause.message}${inner}`
}

interface PreparedRequest {
  readonly url: string | URL
  readonly method: string
  readonly headers: Headers
  readonly body: RequestInit["body"] | undefined
  readonly signal: AbortSignal | undefined
}

const isAborted = (signal: AbortSignal | undefined): boolean => signal !== undefined && signal.aborted

const prepare = (input: string | URL | Request, init: RequestInit | undefined): PreparedRequest => {
  const request = input instanceof Request ? input : undefined
  return {
    url: request === undefined ? (input as string | URL) : request.url,
    method: init?.method ?? request?.method ?? "GET",
    headers: new Headers(init?.headers ?? request?.headers),
    body: init?.body ?? request?.body ?? undefined,
    signal: init?.signal ?? request?.signal ?? undefined
  }
}

export const makeGuardedFetch = (options: GuardedFetchOptions = {}) =>
  Effect.gen(function* () {
    const policy = yield* AddressPolicy
    const connector = yield* SocketConnector
    const context = yield* Effect.context<never>()
    const origin = options.sameOrigin === undefined ? undefined : new URL(options.sameOrigin).origin

    const perform = (request: PreparedRequest) =>
      Effect.gen(function* () {
        // The origin is checked before any DNS lookup, so an off-origin name is never resolved.
        const requested = URL.canParse(String(request.url)) ? new URL(String(request.url)) : undefined
        if (origin !== undefined && requested !== undefined && requested.origin !== origin) {
          return yield* new GuardedFetchError({
            code: "ORIGIN_MISMATCH",
            url: describe(requested),
            reason: `only ${origin} may be contacted`
          })
        }
        const target = yield* policy.validate(request.url)
        const dispatcher = makePinnedDispatcher(target, connector)
        const response = yield* Effect.tryPromise({
          try: (interrupted) =>
            undiciFetch(target.url, {
              method: request.method,
              headers: [...request.headers],
              body: request.body as never,
              ...(request.body instanceof ReadableStream ? { duplex: "half" as const } : {}),
              redirect: "manual",
              dispatcher,
              signal: request.signal === undefined ? interrupted : AbortSignal.any([interrupted, request.signal])
            }),
          catch: (cause) =>
            new GuardedFetchError({ code: "REQUEST_FAILED", url: describe(target.url), reason: errorText(cause), cause })
        }).pipe(Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(() => void dispatcher.destroy()))))

        if (REDIRECT_STATUSES.has(response.status)) {
          yield* Effect.promise(() => response.body?.cancel().catch(() => undefined) ?? Promise.resolve())
          yield* Effect.sync(() => void dispatcher.destroy())
          return yield* new GuardedFetchError({
            code: "REDIRECT_REFUSED",
            url: describe(target.url),
            reason: `the server answered ${response.status} (redirect to ${response.headers.get("location") ?? "nowhere"}); redirects are not followed`
          })
        }
        // The Agent closes gracefully once this response's body is done.
        void dispatcher.close()
        const body = response.body as ReadableStream<Uint8Array> | null
        const capped =
          body === null || NULL_BODY_STATUSES.has(response.status)
            ? null
            : options.maxResponseBytes === undefined
              ? body
              : capReadableStream(body, options.maxResponseBytes, () =>
                  new ResponseSizeError({ url: describe(target.url), limitBytes: options.maxResponseBytes ?? 0 })
                )
        return new Response(capped, {
          status: response.status,
          statusText: response.statusText,
          headers: response.headers as unknown as Headers
        })
      })

    const guarded: GuardedFetch = async (input, init) => {
      const request = prepare(input, init)
      const signal = request.signal
      if (isAborted(signal)) throw signal?.reason
      const exit = await Effect.runPromiseExitWith(context)(perform(request), signal === undefined ? undefined : { signal })
      if (Exit.isSuccess(exit)) return exit.value
      if (isAborted(signal)) throw signal?.reason
      throw Option.getOrElse(Cause.findErrorOption(exit.cause), () => Cause.squash(exit.cause))
    }
    return guarded
  })
