import { Context, type Effect } from "effect"
import type { MediaBackendError } from "../MediaBackendError"
import type { OggOpusInfo } from "../oggOpus"

/** Synthesized speech: Ogg Opus bytes and what a voice message needs to know about them. */
interface SpeechAudio {
  readonly bytes: Uint8Array
  readonly info: OggOpusInfo
}

/** Characters of script one request may carry (OpenAI's `input` limit). */
export const MAX_SCRIPT_CHARS = 4096

/** A speech endpoint (`SPEECH_BASE_URL`); interrupting `synthesize` aborts the request. */
export class SpeechBackend extends Context.Service<SpeechBackend, {
  readonly name: string
  /** The endpoint follows delivery instructions (`voice_instructions` is offered). */
  readonly supportsInstructions: boolean
  readonly synthesize: (request: { readonly text: string; readonly instructions?: string | undefined }) => Effect.Effect<SpeechAudio, MediaBackendError>
}>()("loopcord/media/SpeechBackend") {}
