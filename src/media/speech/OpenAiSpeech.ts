import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Effect, Result, Layer, Option, Redacted } from "effect"
import { SpeechConfig, type SpeechSettings } from "../../config/SpeechConfig"
import { expectOk, readBytes, send, withoutTracerPropagation } from "../backendHttp"
import { MediaBackendError } from "../MediaBackendError"
import { readOggOpus } from "../oggOpus"
import { MAX_SCRIPT_CHARS, SpeechBackend } from "./SpeechBackend"

const NAME = "speech endpoint"

/**
 * An OpenAI-compatible speech endpoint: `POST <SPEECH_BASE_URL>/audio/speech` with
 * `response_format: "opus"` (Ogg Opus, what Discord voice messages are), `instructions` only
 * when `SPEECH_SUPPORTS_INSTRUCTIONS=true`. Whatever comes back must be an Ogg Opus stream.
 */
const make = (settings: SpeechSettings, baseUrl: string) =>
  Effect.gen(function*() {
    const client = withoutTracerPropagation(yield* HttpClient.HttpClient)
    const auth: Record<string, string> = Option.match(settings.apiKey, {
      onNone: () => ({}),
      onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
    })

    const synthesize = (request: { readonly text: string; readonly instructions?: string | undefined }) =>
      Effect.gen(function*() {
        const instructions = settings.supportsInstructions && request.instructions !== undefined && request.instructions.trim() !== ""
          ? { instructions: request.instructions.trim() }
          : {}
        const built = yield* HttpClientRequest.post(`${baseUrl}/audio/speech`).pipe(
          HttpClientRequest.setHeaders({ accept: "audio/ogg, audio/opus, */*;q=0.1", ...auth }),
          HttpClientRequest.bodyJson({
            model: settings.model,
            input: request.text.slice(0, MAX_SCRIPT_CHARS),
            voice: settings.voice,
            response_format: "opus",
            ...instructions
          }),
          Effect.mapError(() => new MediaBackendError({ backend: NAME, reason: "bad_response", detail: "the request could not be encoded" }))
        )
        const response = yield* send(client, NAME, built).pipe(Effect.flatMap((answer) => expectOk(answer, NAME)))
        const contentType = response.headers["content-type"] ?? "no content type"
        const bytes = yield* readBytes(response, NAME, settings.maxAudioBytes)
        const info = readOggOpus(bytes)
        if (Result.isFailure(info)) {
          return yield* new MediaBackendError({
            backend: NAME,
            reason: "wrong_media",
            detail: `the endpoint returned ${contentType} audio that is not Ogg Opus (${info.failure}); it must support response_format "opus"`
          })
        }
        return { bytes, info: info.success }
      })

    return SpeechBackend.of({ name: NAME, supportsInstructions: settings.supportsInstructions, synthesize })
  })

/** The speech backend from `SpeechConfig` (its `baseUrl` must be set), over the given HttpClient. */
export const layer: Layer.Layer<SpeechBackend, never, HttpClient.HttpClient | SpeechConfig> = Layer.effect(
  SpeechBackend,
  Effect.flatMap(SpeechConfig, (settings) =>
    Option.match(settings.baseUrl, {
      onNone: () => Effect.die(new Error("the speech backend needs SPEECH_BASE_URL")),
      onSome: (baseUrl) => make(settings, baseUrl)
    }))
)
