import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Result, Fiber, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { readOggOpus } from "../../../../src/media/oggOpus"
import { generateVoiceMessageTool, voiceMessageSurface } from "../../../../src/tools/builtin/media/GenerateVoiceMessageTool"
import { speechBackend } from "../../../media/backendKit"
import { startFakeSpeech } from "../../../support/fakeMedia/fakeSpeech"
import { callMediaTool, mediaServices, recordingOutlet } from "../../../support/fakeMedia/mediaToolKit"
import { SpeechConfig } from "../../../../src/config/SpeechConfig"
import { SpeechBackend } from "../../../../src/media/speech/SpeechBackend"
import { hangingHttpServer } from "../../../support/hangingHttpServer"

const fake = (options: Parameters<typeof startFakeSpeech>[0] = {}) =>
  Effect.acquireRelease(Effect.promise(() => startFakeSpeech(options)), (server) => Effect.promise(() => server.close()))

const buildTool = (baseUrl: string, supportsInstructions = false) =>
  Effect.gen(function*() {
    const backend = yield* speechBackend(baseUrl, { supportsInstructions })
    return yield* generateVoiceMessageTool.pipe(
      Effect.provideService(SpeechBackend, backend),
      Effect.provide(SpeechConfig.make({ baseUrl: Option.some(baseUrl), supportsInstructions }))
    )
  })

describe("generate_voice_message", () => {
  it("voice_instructions is declared only when the endpoint supports instructions", () => {
    assert.deepStrictEqual(Object.keys(voiceMessageSurface(false).parameters.properties), ["script", "title"])
    assert.deepStrictEqual(Object.keys(voiceMessageSurface(true).parameters.properties), ["script", "title", "voice_instructions"])
    assert.notInclude(voiceMessageSurface(false).description, "voice_instructions")
  })

  it.live("the script becomes an Ogg Opus voice message with its duration and waveform; the reply counts as delivered", () =>
    Effect.gen(function*() {
      const server = yield* fake()
      const tool = yield* buildTool(server.baseUrl, true)
      const { delivered, outlet } = yield* recordingOutlet()
      const { progress, result } = yield* callMediaTool(tool, { script: " Hello from loopcord. ", title: "Greeting!", voice_instructions: "cheerful" }, { outlet })
      assert.isTrue(result.success, JSON.stringify(result))
      assert.isTrue(result.responseDelivered)
      const data = result.data as Record<string, unknown>
      assert.strictEqual(data["duration_secs"], 1.5)
      assert.match(String(data["media_id"]), /^aud_/)
      const [media] = yield* Ref.get(delivered)
      assert.strictEqual(media?.kind, "voice")
      assert.strictEqual(media?.filename, "greeting.ogg")
      assert.strictEqual(media?.mimeType, "audio/ogg")
      assert.isTrue(Result.isSuccess(readOggOpus(media?.bytes ?? new Uint8Array(0))))
      assert.strictEqual(media?.voice?.durationSecs, 1.5)
      assert.isAtMost(Buffer.from(media?.voice?.waveform ?? "", "base64").length, 256)
      assert.deepStrictEqual(server.bodies()[0], { model: "gpt-4o-mini-tts", input: "Hello from loopcord.", voice: "alloy", response_format: "opus", instructions: "cheerful" })
      assert.deepStrictEqual(progress, ["Recording a voice message…"])
    }).pipe(Effect.provide(mediaServices())))

  it.live("non-Ogg audio, a 5xx, an empty or overlong script are clear failures; nothing is delivered", () =>
    Effect.gen(function*() {
      const { delivered, outlet } = yield* recordingOutlet()
      const mp3 = yield* fake({ format: "mp3" })
      const wrong = yield* callMediaTool(yield* buildTool(mp3.baseUrl), { script: "hi" }, { outlet })
      assert.isFalse(wrong.result.success)
      assert.strictEqual(wrong.result.message, "The voice message could not be made: the voice service gave an unreadable answer. Answer in text instead.")
      assert.include(wrong.result.detail ?? "", "not Ogg Opus")
      const down = yield* fake({ failWith: 502 })
      const failed = yield* callMediaTool(yield* buildTool(down.baseUrl), { script: "hi" }, { outlet })
      assert.strictEqual(failed.result.message, "The voice message could not be made: the voice service failed (5xx). Answer in text instead.")
      assert.include(failed.result.detail ?? "", "HTTP 502")
      const ok = yield* fake()
      const tool = yield* buildTool(ok.baseUrl)
      assert.isFalse((yield* callMediaTool(tool, { script: "   " }, { outlet })).result.success)
      assert.include((yield* callMediaTool(tool, { script: "x".repeat(4097) }, { outlet })).result.message, "too long")
      assert.lengthOf(yield* Ref.get(delivered), 0)
      assert.strictEqual(ok.requests.length, 0)
    }).pipe(Effect.provide(mediaServices())))

  it.effect("a speech endpoint that never answers fails at SPEECH_TIMEOUT_MS", () =>
    Effect.gen(function*() {
      const hanging = yield* hangingHttpServer
      const base = hanging.url.replace(/\/slow$/, "")
      const backend = yield* speechBackend(base, {})
      const tool = yield* generateVoiceMessageTool.pipe(
        Effect.provideService(SpeechBackend, backend),
        Effect.provide(SpeechConfig.make({ baseUrl: Option.some(base), timeout: Duration.seconds(20) }))
      )
      const fiber = yield* Effect.forkChild(callMediaTool(tool, { script: "hi" }))
      yield* Deferred.await(hanging.arrived)
      yield* TestClock.adjust("20 seconds")
      const { result } = yield* Fiber.join(fiber)
      assert.strictEqual(result.message, "The voice message could not be made: the voice service timed out. Answer in text instead.")
      assert.include(result.detail ?? "", "SPEECH_TIMEOUT_MS")
      yield* Deferred.await(hanging.closed)
    }).pipe(Effect.provide(mediaServices())))
})
