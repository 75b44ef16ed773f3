import type { HttpClientError } from "effect/http"
import { Duration, Predicate } from "effect"
import { ProviderError, type ProviderErrorReason } from "../domain/ProviderError"
import { contextOverflowOf } from "./contextOverflow"
import { parseJsonOrUndefined } from "./jsonFrame"

/**
 * Mapping of everything that can go wrong on the wire to `ProviderError` (one table, shared by
 * every HTTP provider, so the outer tier sees the same reasons whatever the vendor).
 */

/** HTTP status ⇒ reason: 401/402/403 Auth, 429 RateLimit, 5xx (and 529) Server, 408 Network, other 4xx BadRequest. */
export const reasonForStatus = (status: number): ProviderErrorReason => {
  if (status === 401 || status === 402 || status === 403) return "Auth"
  if (status === 429) return "RateLimit"
  if (status === 408) return "Network"
  if (status >= 500) return "Server"
  if (status >= 400) return "BadRequest"
  return "InvalidResponse"
}

const collapse = (text: string, max = 600): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/** The human message inside a vendor error body (`{error:{message}}`, `[{error:…}]`, `{message}`), if any. */
export const errorMessageOf = (payload: unknown): string | undefined => {
  const root = Array.isArray(payload) ? payload[0] : payload
  if (!Predicate.isObject(root)) return undefined
  const error = root.error
  if (typeof error === "string") return error
  if (Predicate.isObject(error)) {
    const message = error.message
    if (typeof message === "string" && message.length > 0) {
      // OpenRouter nests the upstream's body under `metadata.raw`; it says more than "Provider returned error".
      const raw = Predicate.isObject(error.metadata) ? error.metadata.raw : undefined
      return typeof raw === "string" && raw.length > 0 && raw !== message ? `${message}: ${raw}` : message
    }
  }
  return typeof root.message === "string" ? root.message : undefined
}

/** `Retry-After` as seconds or an HTTP date, or OpenAI's `retry-after-ms`. */
export const retryAfterFrom = (
  headers: Readonly<Record<string, string | undefined>>,
  nowMillis: number
): Duration.Duration | undefined => {
  const millis = headers["retry-after-ms"]
  if (millis !== undefined && /^\d+(\.\d+)?$/.test(millis.trim())) return Duration.millis(Number(millis.trim()))
  const value = headers["retry-after"]?.trim()
  if (value === undefined || value.length === 0) return undefined
  if (/^\d+(\.\d+)?$/.test(value)) return Duration.seconds(Number(value))
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Duration.millis(Math.max(0, date - nowMillis))
}

/** A non-2xx response. `body` is the (bounded) response text. */
export const fromStatus = (options: {
  readonly provider: string
  readonly status: number
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly body: string
  readonly nowMillis: number
}): ProviderError => {
  const payload = parseJsonOrUndefined(options.body)
  const message = errorMessageOf(payload)
  const retryAfter = retryAfterFrom(options.headers, options.nowMillis)
  // A request too long for the window is its own class, whatever status the server chose for it.
  const overflow = options.status >= 400 ? contextOverflowOf(payload, message ?? options.body) : undefined
  return new ProviderError({
    reason: overflow === undefined ? reasonForStatus(options.status) : "ContextOverflow",
    provider: options.provider,
    status: options.status,
    detail: collapse(message ?? (options.body.length > 0 ? options.body : `HTTP ${options.status} with an empty body`)),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(overflow === undefined ? {} : { overflow })
  })
}

/** Reason for an error object a vendor sends inside a 200 stream (`type`/`code`/`status` fields). */
const reasonForPayload = (payload: unknown): ProviderErrorReason => {
  const root = Array.isArray(payload) ? payload[0] : payload
  const error = Predicate.isObject(root) && Predicate.isObject(root.error) ? root.error : Predicate.isObject(root) ? root : {}
  const code = error.code ?? error.status
  if (typeof code === "number") return reasonForStatus(code)
  const label = [error.type, error.code, error.status].filter((part) => typeof part === "string").join(" ").toLowerCase()
  if (/rate_limit|rate limit|resource_exhausted|quota|429/.test(label)) return "RateLimit"
  if (/auth|permission|unauthenticated|invalid_api_key|401|403/.test(label)) return "Auth"
  if (/invalid_request|invalid_argument|not_found|request_too_large|failed_precondition|400|404/.test(label)) {
    return "BadRequest"
  }
  return "Server"
}

/** An error object received inside an otherwise healthy event stream. */
export const fromStreamErrorPayload = (provider: string, payload: unknown): ProviderError => {
  const message = errorMessageOf(payload)
  const overflow = contextOverflowOf(payload, message)
  return new ProviderError({
    reason: overflow === undefined ? reasonForPayload(payload) : "ContextOverflow",
    provider,
    detail: collapse(`error event in the stream: ${message ?? JSON.stringify(payload)}`),
    ...(overflow === undefined ? {} : { overflow })
  })
}

/** How a failure of the HTTP client is named in the detail (the class of failure, without its `Error` suffix). */
const failureName = (tag: HttpClientError.HttpClientError["reason"]["_tag"]): string => tag.replace(/Error$/, "")

export const fromHttpClientError = (provider: string, error: HttpClientError.HttpClientError): ProviderError => {
  const reason = error.reason
  switch (reason._tag) {
    case "TransportError":
    case "EncodeError":
    case "InvalidUrlError":
      return new ProviderError({
        reason: reason._tag === "TransportError" ? "Network" : "BadRequest",
        provider,
        detail: collapse(`request failed (${failureName(reason._tag)}): ${describeCause(reason.cause) ?? reason.message}`),
        cause: reason.cause
      })
    default:
      return new ProviderError({
        reason: reason._tag === "DecodeError" ? "Network" : "InvalidResponse",
        provider,
        status: reason.response.status,
        detail: collapse(`response failed (${failureName(reason._tag)}): ${describeCause(reason.cause) ?? reason.message}`),
        // The underlying failure only: the platform error carries the request, API-key headers included.
        cause: reason.cause
      })
  }
}

const describeCause = (cause: unknown): string | undefined => {
  if (cause instanceof Error) {
    const code = (cause as Error & { readonly code?: unknown }).code
    return typeof code === "string" ? `${code} ${cause.message}` : cause.message
  }
  return typeof cause === "string" ? cause : undefined
}

export const invalidResponse = (provider: string, detail: string): ProviderError =>
  new ProviderError({ reason: "InvalidResponse", provider, detail: collapse(detail) })

/** The body ended before the provider said it was finished (no terminator, no finish reason). */
export const endedEarly = (provider: string, sawFrames: boolean): ProviderError =>
  sawFrames
    ? new ProviderError({
      reason: "Network",
      provider,
      detail: "the stream ended before the provider finished (no finish reason and no end-of-stream marker)"
    })
    : invalidResponse(provider, "the response body contained no server-sent events")
