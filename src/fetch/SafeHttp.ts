import { Context, Data, Duration, Effect, Exit, Layer, RcMap } from "effect"
import { fetch as undiciFetch, type Response as UndiciResponse } from "undici"
import { FetchConfig } from "../config/FetchConfig"
import type { ToolFailureClass } from "../domain/ToolFailureClass"
import { AddressPolicy, normalizeHost, type UrlPolicyError, type ValidatedTarget } from "./AddressPolicy"
import { makePinnedDispatcher } from "./pinnedDispatcher"
import { ResponseSizeError } from "./ResponseSizeError"
import { SocketConnector } from "./SocketConnector"

const USER_AGENT = "loopcord/0.1 (+fetch_url; a Discord bot reading a page a user asked about)"
const ACCEPT = "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.8"

export interface SafeHttpRequest {
  readonly url: string | URL
  readonly method?: "GET" | "HEAD" | "POST"
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string
  /** Defaults: FetchConfig `timeout`, `maxBodyBytes`, `maxRedirects`. */
  readonly timeout?: Duration.Input
  readonly maxBytes?: number
  readonly maxRedirects?: number
  /** An outside cancellation (ToolContext.abortSignal); interruption cancels too. */
  readonly signal?: AbortSignal
  /**
   * Decides from the final answer's status and headers whether its body is worth reading; when
   * not, it is never downloaded (the response comes back with an empty body, `bodyRead` false).
   * One GET then serves where a HEAD preflight and a GET were needed.
   */
  readonly readBody?: (head: { readonly status: number; readonly headers: ReadonlyMap<string, string> }) => boolean
  /**
   * A host an operator configured (a backend's own): private addresses are allowed for it, the
   * metadata floor still holds. Any other host, redirects included, meets the policy as it is.
   */
  readonly trustedHost?: string
}

interface SafeHttpResponse {
  /** The URL of the final hop. */
  readonly url: URL
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  /** The decompressed body, never longer than the cap (empty for HEAD and when `readBody` declined it). */
  readonly body: Uint8Array
  /** False when the body was not read (HEAD, or `readBody` declined it). */
  readonly bodyRead: boolean
  readonly redirects: number
}

/** A request failed on the way; `reason` (the message) is for operators, `failureClass` for the model. */
export class SafeHttpError extends Data.TaggedError("SafeHttpError")<{
  readonly code: "TOO_MANY_REDIRECTS" | "BAD_REDIRECT" | "TIMEOUT" | "ABORTED" | "REQUEST_FAILED"
  readonly url: string
  readonly reason: string
}> {
  override get message(): string {
    return this.reason
  }

  get failureClass(): ToolFailureClass {
    switch (this.code) {
      case "TOO_MANY_REDIRECTS":
        return "too_many_redirects"
      case "BAD_REDIRECT":
        return "bad_redirect"
      case "TIMEOUT":
        return "timed_out"
      case "ABORTED":
        return "cancelled"
      case "REQUEST_FAILED":
        return "unreachable"
    }
  }
}

export type SafeHttpFailure = SafeHttpError | UrlPolicyError | ResponseSizeError

const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308])
const CREDENTIAL_HEADERS = ["authorization", "cookie", "proxy-authorization"]
const CONTENT_HEADERS = ["content-type", "content-length", "content-encoding", "content-language", "content-location"]

const shown = (url: URL): string => `${url.origin}${url.pathname}`

/** The normalized host of a hop's URL ("" when it does not parse: the policy refuses it anyway). */
const hostOf = (url: string | URL): string => {
  const text = typeof url === "string" ? url.trim() : url.href
  return URL.canParse(text) ? normalizeHost(new URL(text).hostname) : ""
}

const failureText = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  return cause.cause instanceof Error ? `${cause.message} (${cause.cause.message})` : cause.message
}

interface Hop {
  readonly url: string | URL
  readonly method: string
  readonly headers: Record<string, string>
  readonly body: string | undefined
}

/** Reads the body chunk by chunk; past `maxBytes` the reader is cancelled (the socket closes). */
const readCapped = (response: UndiciResponse, url: URL, maxBytes: number) =>
  Effect.suspend(() => {
    const stream = response.body
    if (stream === null) return Effect.succeed(new Uint8Array(0))
    const reader = stream.getReader()
    const chunks: Array<Uint8Array> = []
    let total = 0
    const loop: Effect.Effect<Uint8Array, ResponseSizeError | SafeHttpError> = Effect.tryPromise({
      try: () => reader.read(),
      catch: (cause) => new SafeHttpError({ code: "REQUEST_FAILED", url: shown(url), reason: `Reading ${shown(url)} failed: ${failureText(cause)}` })
    }).pipe(
      Effect.flatMap((chunk) => {
        if (chunk.done) return Effect.succeed(Buffer.concat(chunks, total))
        total += chunk.value.byteLength
        if (total > maxBytes) return Effect.fail(new ResponseSizeError({ url: shown(url), limitBytes: maxBytes }))
        chunks.push(chunk.value)
        return loop
      })
    )
    return loop.pipe(
      Effect.onExit((exit) =>
        Exit.isSuccess(exit) ? Effect.void : Effect.promise(() => reader.cancel().catch(() => undefined))
      )
    )
  })

const make = Effect.gen(function* () {
  const config = yield* FetchConfig
  const policy = yield* AddressPolicy
  const connector = yield* SocketConnector

  // Pinned dispatchers pooled by (host, validated addresses): the HEAD preflight, the GET and
  // later fetches of the same site reuse kept-alive sockets. A different DNS answer is a
  // different key, so a reused socket always goes to an address validated for this request.
  const pool = yield* RcMap.make({
    lookup: (key: string) => {
      const [host = "", ...addresses] = key.split("\n")
      return Effect.acquireRelease(
        Effect.sync(() => makePinnedDispatcher({ host, addresses: addresses.map((address) => ({ address })) }, connector)),
        (dispatcher) => Effect.promise(() => dispatcher.destroy().catch(() => undefined))
      )
    },
    idleTimeToLive: Duration.seconds(30)
  })
  const pinKey = (target: ValidatedTarget): string =>
    [target.host, ...target.addresses.map((entry) => entry.address)].join("\n")

  /** One request to an already validated target, through its pinned pool. */
  const send = (target: ValidatedTarget, hop: Hop, signal: AbortSignal | undefined) =>
    RcMap.get(pool, pinKey(target)).pipe(
      Effect.flatMap((dispatcher) =>
        Effect.tryPromise({
          try: (interrupted) =>
            undiciFetch(target.url, {
              method: hop.method,
              headers: hop.headers,
              ...(hop.body === undefined ? {} : { body: hop.body }),
              redirect: "manual",
              dispatcher,
              signal: signal === undefined ? interrupted : AbortSignal.any([interrupted, signal])
            }),
          catch: (cause) =>
            signal?.aborted === true
              ? new SafeHttpError({ code: "ABORTED", url: shown(target.url), reason: `Request to ${shown(target.url)} was cancelled` })
              : new SafeHttpError({
                  code: "REQUEST_FAILED",
                  url: shown(target.url),
                  reason: `Request to ${shown(target.url)} failed: ${failureText(cause)}`
                })
        })
      )
    )

  const follow = (request: SafeHttpRequest, maxBytes: number, maxRedirects: number) =>
    Effect.gen(function* () {
      let hop: Hop = {
        url: request.url,
        method: request.method ?? "GET",
        headers: { accept: ACCEPT, "user-agent": USER_AGENT, ...request.headers },
        body: request.body
      }
      const visited: Array<string> = []
      for (let redirects = 0; ; redirects++) {
        const target = yield* policy.validate(
          hop.url,
          request.trustedHost !== undefined && hostOf(hop.url) === request.trustedHost ? { allowPrivateNetwork: true } : undefined
        )
        visited.push(target.url.href)
        const outcome = yield* Effect.scoped(
          Effect.gen(function* () {
            const response = yield* send(target, hop, request.signal)
            if (REDIRECTS.has(response.status)) {
              yield* Effect.promise(() => response.body?.cancel().catch(() => undefined) ?? Promise.resolve())
              return { redirect: response } as const
            }
            const headers = new Map<string, string>()
            response.headers.forEach((value, key) => headers.set(key, value))
            const wanted = hop.method !== "HEAD" && (request.readBody?.({ status: response.status, headers }) ?? true)
            if (!wanted) {
              yield* Effect.promise(() => response.body?.cancel().catch(() => undefined) ?? Promise.resolve())
              return {
                done: { url: target.url, status: response.status, headers, body: new Uint8Array(0), bodyRead: false, redirects } satisfies SafeHttpResponse
              } as const
            }
            // A declared length over the cap is refused before a byte of the body is read.
            const declared = Number(headers.get("content-length") ?? Number.NaN)
            if (Number.isFinite(declared) && declared > maxBytes) {
              yield* Effect.promise(() => response.body?.cancel().catch(() => undefined) ?? Promise.resolve())
              return yield* new ResponseSizeError({ url: shown(target.url), limitBytes: maxBytes })
            }
            const body = yield* readCapped(response, target.url, maxBytes)
            return {
              done: { url: target.url, status: response.status, headers, body, bodyRead: true, redirects } satisfies SafeHttpResponse
            } as const
          })
        )
        if ("done" in outcome) return outcome.done
        const response = outcome.redirect
        const location = response.headers.get("location")
        if (location === null || location.trim() === "") {
          return yield* new SafeHttpError({
            code: "BAD_REDIRECT",
            url: shown(target.url),
            reason: `${shown(target.url)} answered ${response.status} without a Location header`
          })
        }
        if (!URL.canParse(location, target.url.href)) {
          return yield* new SafeHttpError({
            code: "BAD_REDIRECT",
            url: shown(target.url),
            reason: `${shown(target.url)} redirected to an invalid Location`
          })
        }
        const next = new URL(location, target.url)
        if (redirects + 1 > maxRedirects) {
          const loop = visited.includes(next.href) ? " (redirect loop)" : ""
          return yield* new SafeHttpError({
            code: "TOO_MANY_REDIRECTS",
            url: shown(target.url),
            reason: `Too many redirects: more than ${maxRedirects} starting at ${visited[0] ?? ""}${loop}`
          })
        }
        const toGet = response.status === 303 || ((response.status === 301 || response.status === 302) && hop.method === "POST")
        const headers = { ...hop.headers }
        if (toGet) for (const name of CONTENT_HEADERS) delete headers[name]
        if (next.origin !== target.url.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name]
        hop = {
          url: next,
          method: toGet && hop.method !== "HEAD" ? "GET" : hop.method,
          headers,
          body: toGet ? undefined : hop.body
        }
      }
    })

  const request = Effect.fn("SafeHttp.request")(function* (request: SafeHttpRequest) {
    const timeout = Duration.fromInputUnsafe(request.timeout ?? config.timeout)
    return yield* follow(request, request.maxBytes ?? config.maxBodyBytes, request.maxRedirects ?? config.maxRedirects).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            new SafeHttpError({
              code: "TIMEOUT",
              url: String(request.url),
              reason: `Request timed out after ${Duration.toMillis(timeout)} ms`
            })
          )
      })
    )
  })

  return { request }
})

/**
 * safe_http (docs/architecture.md, fetch_url and safe_http): every hop is validated by the
 * AddressPolicy and connected through a dispatcher pinned to the validated addresses; redirects are
 * followed by hand (each hop revalidated; 303 and 301/302 after POST become GET); the body is read
 * under a hard byte cap; the whole exchange runs under a Clock deadline and interruption closes the
 * socket.
 */
export class SafeHttp extends Context.Service<SafeHttp, Effect.Success<typeof make>>()("loopcord/fetch/SafeHttp") {
  static readonly Default = Layer.effect(SafeHttp, make)
}
