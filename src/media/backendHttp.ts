import * as Headers from "effect/http/Headers"
import * as HttpClient from "effect/http/HttpClient"
import type * as HttpClientRequest from "effect/http/HttpClientRequest"
import type * as HttpClientResponse from "effect/http/HttpClientResponse"
import { Effect, Option, Predicate, Stream } from "effect"
import { MediaBackendError } from "./MediaBackendError"
import { parseJsonOrUndefined } from "../domain/parseJson"

/** Header names kept out of spans and logs beyond the platform's defaults. */
const redactedHeaderNames = ["authorization", "x-api-key", "cookie", "set-cookie"]

/** Error bodies are read this far, for the message. */
const ERROR_BODY_BYTES = 4096
/** JSON answers (job ids, history) are read this far. */
const JSON_BODY_BYTES = 8 * 1024 * 1024

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "reason" in error && "message" in error) {
    const cause = "cause" in error && error.cause instanceof Error ? ` (${error.cause.message})` : ""
    return `${String(error.message)}${cause}`
  }
  return error instanceof Error ? error.message : String(error)
}

/** The client without trace headers: a backend vendor has no business with our trace ids. */
export const withoutTracerPropagation = (client: HttpClient.HttpClient): HttpClient.HttpClient =>
  HttpClient.transform(client, (response) => Effect.provideService(response, HttpClient.TracerPropagationEnabled, false))

/** Sends a request; a transport failure is `unreachable`, naming the backend. */
export const send = (client: HttpClient.HttpClient, backend: string, request: HttpClientRequest.HttpClientRequest) =>
  client.execute(request).pipe(
    Effect.provideService(Headers.CurrentRedactedNames, redactedHeaderNames),
    Effect.mapError((error) => new MediaBackendError({ backend, reason: "unreachable", detail: `request failed: ${describe(error)}` }))
  )

/** The body, failing `too_large` past `maxBytes` (the download stops there). */
export const readBytes = (response: HttpClientResponse.HttpClientResponse, backend: string, maxBytes: number) =>
  response.stream.pipe(
    Stream.mapError((error) => new MediaBackendError({ backend, reason: "unreachable", detail: `reading the answer failed: ${describe(error)}` })),
    Stream.runFoldEffect(() => ({ chunks: [] as Array<Uint8Array>, size: 0 }), (acc, chunk: Uint8Array) =>
      acc.size + chunk.byteLength > maxBytes
        ? Effect.fail(new MediaBackendError({ backend, reason: "too_large", detail: `the answer is larger than ${Math.round(maxBytes / 1024 / 1024)} MB` }))
        : Effect.sync(() => {
          acc.chunks.push(chunk)
          return { chunks: acc.chunks, size: acc.size + chunk.byteLength }
        })),
    Effect.map(({ chunks, size }) => new Uint8Array(Buffer.concat(chunks, size)))
  )

/** A short text of an error body (the vendor's `error.message` when it is JSON). */
const errorText = (bytes: Uint8Array): string => {
  const text = Buffer.from(bytes).toString("utf8").slice(0, ERROR_BODY_BYTES)
  // Not JSON, or no error in it: the raw text.
  const parsed = parseJsonOrUndefined(text)
  if (Predicate.isObject(parsed) && "error" in parsed) {
    const error = parsed.error
    if (typeof error === "string") return error
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") return error.message
  }
  return text.replace(/\s+/g, " ").trim().slice(0, 300)
}

/** A 2xx response as is; any other status is `http_status`, the vendor's message in the detail (for the logs only). */
export const expectOk = (response: HttpClientResponse.HttpClientResponse, backend: string) =>
  response.status >= 200 && response.status < 300
    ? Effect.succeed(response)
    : Effect.flatMap(
      readBytes(response, backend, ERROR_BODY_BYTES).pipe(Effect.orElseSucceed(() => new Uint8Array(0))),
      (bytes) => {
        const text = errorText(bytes)
        return Effect.fail(new MediaBackendError({
          backend,
          reason: "http_status",
          status: response.status,
          detail: `HTTP ${response.status}${text === "" ? "" : `: ${text}`}`
        }))
      }
    )

/** A 2xx JSON answer. */
export const readJson = (response: HttpClientResponse.HttpClientResponse, backend: string) =>
  Effect.flatMap(readBytes(response, backend, JSON_BODY_BYTES), (bytes) =>
    Effect.try({
      try: (): unknown => JSON.parse(Buffer.from(bytes).toString("utf8")),
      catch: () => new MediaBackendError({ backend, reason: "bad_response", detail: "the answer is not JSON" })
    }))

/** A field of an unknown JSON value. */
export const field = (value: unknown, ...path: ReadonlyArray<string | number>): unknown => {
  let current = value
  for (const key of path) {
    if (typeof current !== "object" || current === null) return undefined
    current = (current as Record<string | number, unknown>)[key]
  }
  return current
}

export const stringField = (value: unknown, ...path: ReadonlyArray<string | number>): Option.Option<string> => {
  const found = field(value, ...path)
  return typeof found === "string" && found.length > 0 ? Option.some(found) : Option.none()
}
