import { Stream } from "effect"
import type { HttpClientError, HttpClientResponse } from "effect/http"
import { type Decoder, decodeWith } from "../decodeWith"

/** Marks a response that can decode its body as it reads it, in the body's own channel. */
export const DecodableBodyId: unique symbol = Symbol.for("loopcord/provider/DecodableBody")

export interface DecodableBody {
  readonly [DecodableBodyId]: <O, E, E2>(
    make: () => Decoder<Uint8Array, O, E>,
    onError: (error: HttpClientError.HttpClientError) => E2
  ) => Stream.Stream<O, E | E2>
}

const isDecodableBody = (response: HttpClientResponse.HttpClientResponse): response is HttpClientResponse.HttpClientResponse & DecodableBody =>
  DecodableBodyId in response

/**
 * A response body decoded by `make()`: in the body's own channel when the response can
 * (UndiciResponse; a decoding stage after the body stream is a channel pipe per call), else as
 * a stage after `response.stream`, which decodes the same.
 */
export const decodeBody = <O, E, E2>(
  response: HttpClientResponse.HttpClientResponse,
  make: () => Decoder<Uint8Array, O, E>,
  onError: (error: HttpClientError.HttpClientError) => E2
): Stream.Stream<O, E | E2> =>
  isDecodableBody(response)
    ? response[DecodableBodyId](make, onError)
    : decodeWith(make)(Stream.mapError(response.stream, onError))
