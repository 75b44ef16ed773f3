import { Effect, Inspectable, Option, Pipeable, Redactable, type Schema, Stream } from "effect"
import { Cookies, Headers, HttpClientError, type HttpClientRequest, HttpClientResponse, HttpIncomingMessage, UrlParams } from "effect/http"
import type { Socket } from "effect/socket"
import type { Dispatcher } from "undici"
import { type Decoder, noOutput } from "../decodeWith"
import { type DecodableBody, DecodableBodyId } from "./DecodableBody"
import { readableChannel } from "./readableChannel"

/** The body as it comes: every chunk read, as is. */
const asIs = (): Decoder<Uint8Array, Uint8Array, never> => ({ push: (input) => ({ out: Array.from(input) }), end: () => noOutput })

/**
 * Aborts the request of a response dropped unread (an interrupt between the answer and its
 * body being read): an unread undici body holds its socket, and nothing else would free it.
 */
const unreadResponses = new FinalizationRegistry<Dispatcher.ResponseData["body"]>((body) => {
  // Nobody listens to a dropped body: the abort error its destroy emits must not be unhandled.
  body.on("error", ignoreAbort)
  body.destroy()
})
const ignoreAbort = () => {}

/**
 * undici's response headers as platform Headers: its names are lower-cased already, so only
 * repeated headers (arrays) need `Headers.fromInput`'s joining; the rest is one object copy.
 */
const asHeaders = (source: Dispatcher.ResponseData["headers"]): Headers.Headers => {
  for (const name in source) {
    if (typeof source[name] !== "string") return Headers.fromInput(source as Headers.Input)
  }
  return Headers.fromRecordUnsafe({ ...source } as Record<string, string>)
}

/** An undici answer as the platform's HttpClientResponse; the body is read at most once. */
export class UndiciResponse extends Inspectable.Class implements HttpClientResponse.HttpClientResponse, DecodableBody {
  readonly [HttpIncomingMessage.TypeId]: typeof HttpIncomingMessage.TypeId = HttpIncomingMessage.TypeId
  readonly [HttpClientResponse.TypeId]: typeof HttpClientResponse.TypeId = HttpClientResponse.TypeId
  private cachedHeaders: Headers.Headers | undefined
  private cachedCookies: Cookies.Cookies | undefined
  /** The body's text, read once: `text`, `json` and `urlParamsBody` may all be asked, as of the platform's responses. */
  private textRead: Promise<string> | undefined

  constructor(
    readonly request: HttpClientRequest.HttpClientRequest,
    readonly url: string,
    private readonly source: Dispatcher.ResponseData
  ) {
    super()
    unreadResponses.register(this, source.body, this)
  }

  get status(): number {
    return this.source.statusCode
  }

  get headers(): Headers.Headers {
    return (this.cachedHeaders ??= asHeaders(this.source.headers))
  }

  get cookies(): Cookies.Cookies {
    if (this.cachedCookies !== undefined) return this.cachedCookies
    const header = this.source.headers["set-cookie"]
    return (this.cachedCookies = header === undefined ? Cookies.empty : Cookies.fromSetCookie(Array.isArray(header) ? header : [header]))
  }

  get remoteAddress(): Option.Option<string> {
    return Option.none()
  }

  get stream(): Stream.Stream<Uint8Array, HttpClientError.HttpClientError> {
    return Stream.fromChannel(readableChannel(this.claimBody(), (cause) => this.decodeError(cause), asIs))
  }

  [DecodableBodyId]<O, E, E2>(
    make: () => Decoder<Uint8Array, O, E>,
    onError: (error: HttpClientError.HttpClientError) => E2
  ): Stream.Stream<O, E | E2> {
    return Stream.fromChannel(readableChannel(this.claimBody(), (cause) => onError(this.decodeError(cause)), make))
  }

  get text(): Effect.Effect<string, HttpClientError.HttpClientError> {
    return Effect.tryPromise({
      try: () => (this.textRead ??= this.claimBody().text()),
      catch: (cause) => this.decodeError(cause)
    }).pipe(Effect.onInterrupt(() => Effect.sync(() => this.source.body.destroy())))
  }

  get json(): Effect.Effect<Schema.Json, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => (text === "" ? null : JSON.parse(text) as Schema.Json), catch: (cause) => this.decodeError(cause) }))
  }

  get urlParamsBody(): Effect.Effect<UrlParams.UrlParams, HttpClientError.HttpClientError> {
    return Effect.flatMap(this.text, (text) =>
      Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(text)), catch: (cause) => this.decodeError(cause) }))
  }

  get arrayBuffer(): Effect.Effect<ArrayBuffer, HttpClientError.HttpClientError> {
    return this.whole((body) => body.arrayBuffer())
  }

  get formData(): Effect.Effect<FormData, HttpClientError.HttpClientError> {
    return this.whole((body) => body.formData() as Promise<FormData>)
  }

  /** No provider upgrades its connection. */
  get upgrade(): Effect.Effect<Socket.Socket, HttpClientError.HttpClientError> {
    return Effect.fail(new HttpClientError.HttpClientError({
      reason: new HttpClientError.StatusCodeError({ request: this.request, response: this, description: "upgrades are not supported" })
    }))
  }

  pipe() {
    return Pipeable.pipeArguments(this, arguments)
  }

  /** Never reads the body (the platform's `toJSON` does, to show it). */
  toJSON(): unknown {
    return {
      _id: "HttpClientResponse",
      request: this.request.toJSON(),
      status: this.status,
      headers: Redactable.redact(this.headers)
    }
  }

  private claimBody(): Dispatcher.ResponseData["body"] {
    unreadResponses.unregister(this)
    return this.source.body
  }

  /** The whole body at once; interrupting the read destroys the body (the request is aborted). */
  private whole<A>(read: (body: Dispatcher.ResponseData["body"]) => Promise<A>): Effect.Effect<A, HttpClientError.HttpClientError> {
    return Effect.suspend(() => {
      const body = this.claimBody()
      return Effect.tryPromise({ try: () => read(body), catch: (cause) => this.decodeError(cause) }).pipe(
        Effect.onInterrupt(() => Effect.sync(() => body.destroy()))
      )
    })
  }

  private decodeError(cause: unknown): HttpClientError.HttpClientError {
    return new HttpClientError.HttpClientError({
      reason: new HttpClientError.DecodeError({ request: this.request, response: this, cause })
    })
  }
}
