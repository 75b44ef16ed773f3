import { Duration, Effect, Result, Option, Schema } from "effect"
import { SpeechConfig } from "../../../config/SpeechConfig"
import type { JsonSchemaObject } from "../../../domain/ToolDeclaration"
import { toolFailure, toolSuccess, type ToolResult } from "../../../domain/ToolResult"
import { MediaBackendError } from "../../../media/MediaBackendError"
import { MediaLibrary } from "../../../media/MediaLibrary"
import { MAX_SCRIPT_CHARS, SpeechBackend } from "../../../media/speech/SpeechBackend"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { deliverMedia } from "./deliverMedia"

export const GENERATE_VOICE_MESSAGE = "generate_voice_message"

const VoiceArgs = Schema.Struct({
  script: Schema.String,
  title: Schema.optional(Schema.String),
  voice_instructions: Schema.optional(Schema.String)
})

/** What the model is shown: `voice_instructions` only when the endpoint follows them. */
export const voiceMessageSurface = (supportsInstructions: boolean): { readonly description: string; readonly parameters: JsonSchemaObject } => ({
  description:
    "Send a spoken voice message (a Discord voice message; in the terminal an audio file) instead of, or besides, text. " +
    "Keep it short: a few sentences." +
    (supportsInstructions ? " voice_instructions set how it is spoken." : ""),
  parameters: {
    type: "object",
    properties: {
      script: {
        type: "string",
        description: `What is said, read aloud verbatim: plain spoken text, no stage directions, markup or emoji (at most ${MAX_SCRIPT_CHARS} characters).`
      },
      title: { type: "string", description: "A short name for the recording (used as its file name)." },
      ...(supportsInstructions
        ? { voice_instructions: { type: "string", description: "How to speak it: tone, pace, emotion, accent (e.g. 'warm and slow, a little amused')." } }
        : {})
    },
    required: ["script"]
  }
})

/** A file name from a title: letters, digits and dashes. */
const fileStem = (title: string | undefined, fallback: string): string => {
  const stem = (title ?? "").normalize("NFKD").replace(/[^A-Za-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 48).toLowerCase()
  return stem === "" ? fallback : stem
}

/**
 * `generate_voice_message`: exists only when SPEECH_BASE_URL is set. The script is
 * synthesized as Ogg Opus by the speech endpoint and delivered as a voice message (duration and
 * waveform read from the stream); the voice message is the reply, so an empty follow-up settles.
 */
export const generateVoiceMessageTool: Effect.Effect<Tool, never, SpeechBackend | SpeechConfig | MediaLibrary> = Effect.gen(function*() {
  const backend = yield* SpeechBackend
  const settings = yield* SpeechConfig
  const library = yield* MediaLibrary
  const surface = voiceMessageSurface(backend.supportsInstructions)

  const execute = (args: typeof VoiceArgs.Type) =>
    Effect.gen(function*(): Effect.fn.Return<ToolResult, never, ToolContext> {
      const context = yield* ToolContext
      const script = args.script.trim()
      if (script === "") return toolFailure("script must be a non-empty string", { message: "generate_voice_message needs the words to speak." })
      if (script.length > MAX_SCRIPT_CHARS) {
        return toolFailure(`script is ${script.length} characters; at most ${MAX_SCRIPT_CHARS}`, { message: `The script is too long for one voice message (at most ${MAX_SCRIPT_CHARS} characters): shorten it.` })
      }
      if (!context.suppressProgressNotices) yield* context.progress("Recording a voice message…")
      const timeoutMs = Duration.toMillis(settings.timeout)
      const audio = yield* Effect.result(backend.synthesize({ text: script, instructions: args.voice_instructions }).pipe(
        Effect.timeoutOrElse({
          duration: settings.timeout,
          orElse: () =>
            Effect.fail(new MediaBackendError({ backend: backend.name, reason: "timeout", detail: `no audio after ${timeoutMs / 1000}s (SPEECH_TIMEOUT_MS)` }))
        })
      ))
      if (Result.isFailure(audio)) {
        yield* Effect.logWarning(`generate_voice_message failed: ${audio.failure.message}`)
        const failure = audio.failure.failureText("voice")
        return toolFailure(failure, { message: `The voice message could not be made: ${failure}. Answer in text instead.`, detail: audio.failure.message })
      }
      const entry = yield* library.register({ _tag: "Stored", bytes: audio.success.bytes, mimeType: "audio/ogg", filename: "voice-message.ogg" }, "audio")
      const durationSecs = Math.round(audio.success.info.durationSecs * 100) / 100
      const delivery = yield* deliverMedia(context, {
        kind: "voice",
        bytes: audio.success.bytes,
        // Discord shows voice messages by their flag; the name only matters for downloads.
        filename: `${fileStem(args.title, "voice-message")}.ogg`,
        mimeType: "audio/ogg",
        mediaId: entry.id,
        voice: { durationSecs, waveform: audio.success.info.waveform }
      })
      if (Result.isFailure(delivery)) {
        return toolFailure("the voice message could not be sent", {
          message: "The voice message was recorded but could not be sent here.",
          detail: delivery.failure.message
        })
      }
      const posted = Option.isSome(delivery.success)
      return toolSuccess({
        status: "voice_message_sent",
        media_id: entry.id,
        duration_secs: durationSecs,
        posted,
        ...(posted && delivery.success.value.savedTo !== undefined ? { saved_to: delivery.success.value.savedTo } : {})
      }, { responseDelivered: posted })
    })

  const tool = makeTool({
    name: GENERATE_VOICE_MESSAGE,
    description: surface.description,
    category: "utility",
    parameters: VoiceArgs,
    requiresFollowUp: true,
    execute,
    triggerPatterns: [/\bvoice (message|note|memo)\b/i, /\b(say|read) (it|this|that) (out loud|aloud)\b/i]
  })
  return { ...tool, parameters: surface.parameters }
})
