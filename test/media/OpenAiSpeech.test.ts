import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { startFakeSpeech } from "../support/fakeMedia/fakeSpeech"
import { voiceOgg } from "../support/mediaFixtures"
import { key, speechBackend } from "./backendKit"

const fake = (options: Parameters<typeof startFakeSpeech>[0] = {}) =>
  Effect.acquireRelease(Effect.promise(() => startFakeSpeech(options)), (server) => Effect.promise(() => server.close()))

describe("OpenAI-compatible speech backend (SPEECH_BASE_URL)", () => {
  it.effect("POST /audio/speech with response_format opus; the Ogg Opus answer comes back with its duration and waveform", () =>
    Effect.gen(function*() {
      const server = yield* fake()
      const backend = yield* speechBackend(server.baseUrl, { apiKey: key("sk-voice"), voice: "nova", model: "tts-1" })
      const audio = yield* backend.synthesize({ text: "Hello there", instructions: "whisper" })
      assert.deepStrictEqual([...audio.bytes], [...voiceOgg()])
      assert.closeTo(audio.info.durationSecs, 1.5, 0.001)
      assert.deepStrictEqual(server.bodies(), [{ model: "tts-1", input: "Hello there", voice: "nova", response_format: "opus" }], "no instructions unless the endpoint supports them")
      assert.strictEqual(server.requests[0]?.headers.authorization, "Bearer sk-voice")
    }))

  it.effect("instructions are sent only with SPEECH_SUPPORTS_INSTRUCTIONS", () =>
    Effect.gen(function*() {
      const server = yield* fake()
      const backend = yield* speechBackend(server.baseUrl, { supportsInstructions: true })
      assert.isTrue(backend.supportsInstructions)
      yield* backend.synthesize({ text: "Hi", instructions: " cheerful " })
      assert.strictEqual(server.bodies()[0]?.["instructions"], "cheerful")
    }))

  it.effect("non-Ogg audio and 4xx/5xx are clear failures", () =>
    Effect.gen(function*() {
      const mp3 = yield* fake({ format: "mp3" })
      const wrong = yield* Effect.flip((yield* speechBackend(mp3.baseUrl)).synthesize({ text: "Hi" }))
      assert.strictEqual(wrong.reason, "wrong_media")
      assert.include(wrong.detail, "audio/mpeg")
      assert.include(wrong.detail, "not Ogg Opus")
      for (const status of [401, 503]) {
        const failing = yield* fake({ failWith: status })
        const error = yield* Effect.flip((yield* speechBackend(failing.baseUrl)).synthesize({ text: "Hi" }))
        assert.strictEqual(error.status, status)
        assert.include(error.detail, `scripted failure ${status}`)
      }
    }))
})
