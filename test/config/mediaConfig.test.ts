import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Duration, Effect, Result, Option, Redacted } from "effect"
import { ImageConfig, parseWorkflowSetting } from "../../src/config/ImageConfig"
import { SpeechConfig } from "../../src/config/SpeechConfig"
import { seesImages, VisionConfig } from "../../src/config/VisionConfig"
import { describeFailure } from "../../src/config/startupError"
import { settingsProvider } from "../../src/config/dotenv"

const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, settingsProvider(env))

/** The service a config layer builds under `env`; a failure as the one-line start-up message. */
const read = <S>(config: Effect.Effect<S, unknown>, env: Record<string, string>) =>
  config.pipe(
    withEnv(env),
    Effect.mapError((error) => describeFailure(Cause.fail(error))),
    Effect.result
  )

const settingsOf = {
  ImageConfig: Effect.provide(ImageConfig, ImageConfig.layer),
  SpeechConfig: Effect.provide(SpeechConfig, SpeechConfig.layer),
  VisionConfig: Effect.provide(VisionConfig, VisionConfig.layer)
}

const failsNaming = (result: Result.Result<unknown, string>, variable: string) => {
  assert.isTrue(Result.isFailure(result), `expected ${variable} to fail start-up`)
  if (Result.isFailure(result)) {
    assert.include(result.failure, variable)
    assert.notInclude(result.failure, "\n")
  }
}

const workflow = JSON.stringify({ "6": { class_type: "CLIPTextEncode", inputs: { text: "%prompt%" } } })

describe("media configuration (design §5.2)", () => {
  it.effect("nothing set: no image backend, no speech endpoint, no vision models", () =>
    Effect.gen(function*() {
      const image = yield* Effect.flatMap(read(settingsOf.ImageConfig, {}), Effect.fromResult)
      assert.isTrue(Option.isNone(image.backend))
      const speech = yield* Effect.flatMap(read(settingsOf.SpeechConfig, {}), Effect.fromResult)
      assert.isTrue(Option.isNone(speech.baseUrl))
      const vision = yield* Effect.flatMap(read(settingsOf.VisionConfig, {}), Effect.fromResult)
      assert.deepStrictEqual(vision.visionModels, [])
      assert.strictEqual(Duration.toMillis(vision.analysisTimeout), 60_000)
      assert.strictEqual(vision.maxImageBytes, 20 * 1024 * 1024)
    }))

  it.effect("IMAGE_BACKEND=openai defaults to OpenAI's API and gpt-image-1; keys are redacted; tags trimmed", () =>
    Effect.gen(function*() {
      const image = yield* Effect.flatMap(read(settingsOf.ImageConfig, {
        IMAGE_BACKEND: " OpenAI ",
        IMAGE_API_KEY: "sk-image",
        IMAGE_DEFAULT_POSITIVE_TAGS: " watercolor, soft light ",
        IMAGE_TIMEOUT_MS: "5000"
      }), Effect.fromResult)
      assert.deepStrictEqual(image.backend, Option.some("openai" as const))
      assert.strictEqual(image.baseUrl, "https://api.openai.com/v1")
      assert.strictEqual(image.model, "gpt-image-1")
      assert.strictEqual(Option.map(image.apiKey, Redacted.value).pipe(Option.getOrUndefined), "sk-image")
      assert.notInclude(String(image.apiKey), "sk-image")
      assert.strictEqual(image.defaultPositiveTags, "watercolor, soft light")
      assert.strictEqual(Duration.toMillis(image.timeout), 5000)
    }))

  it.effect("comfyui needs IMAGE_BASE_URL and COMFYUI_WORKFLOW (inline JSON or a file); bad values name their variable", () =>
    Effect.gen(function*() {
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_BACKEND: "dalle" }), "IMAGE_BACKEND")
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_BACKEND: "comfyui", COMFYUI_WORKFLOW: workflow }), "IMAGE_BASE_URL")
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_BACKEND: "comfyui", IMAGE_BASE_URL: "http://127.0.0.1:8188" }), "COMFYUI_WORKFLOW")
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_BACKEND: "comfyui", IMAGE_BASE_URL: "http://127.0.0.1:8188", COMFYUI_WORKFLOW: "{not json" }), "COMFYUI_WORKFLOW")
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_BACKEND: "comfyui", IMAGE_BASE_URL: "http://127.0.0.1:8188", COMFYUI_WORKFLOW: "/no/such/workflow.json" }), "COMFYUI_WORKFLOW")
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_BACKEND: "openai", IMAGE_BASE_URL: "ftp://x" }), "IMAGE_BASE_URL")
      failsNaming(yield* read(settingsOf.ImageConfig, { IMAGE_TIMEOUT_MS: "soon" }), "IMAGE_TIMEOUT_MS")
      const ok = yield* Effect.flatMap(read(settingsOf.ImageConfig, { IMAGE_BACKEND: "comfyui", IMAGE_BASE_URL: "http://127.0.0.1:8188/", COMFYUI_WORKFLOW: workflow }), Effect.fromResult)
      assert.strictEqual(ok.baseUrl, "http://127.0.0.1:8188")
      assert.isTrue(Option.isSome(ok.comfyWorkflow))
    }))

  it("a workflow path is read from disk; an array or a non-object is refused", () => {
    assert.deepStrictEqual(parseWorkflowSetting("wf.json", () => workflow), Result.succeed(Option.some(JSON.parse(workflow))))
    assert.isTrue(Result.isFailure(parseWorkflowSetting("list.json", () => "[1,2]")))
    assert.deepStrictEqual(parseWorkflowSetting("  ", () => ""), Result.succeed(Option.none()))
  })

  it.effect("speech: the endpoint, model, voice and the instructions opt-in", () =>
    Effect.gen(function*() {
      const speech = yield* Effect.flatMap(read(settingsOf.SpeechConfig, {
        SPEECH_BASE_URL: "http://127.0.0.1:8880/v1/",
        SPEECH_VOICE: "nova",
        SPEECH_SUPPORTS_INSTRUCTIONS: "true"
      }), Effect.fromResult)
      assert.deepStrictEqual(speech.baseUrl, Option.some("http://127.0.0.1:8880/v1"))
      assert.strictEqual(speech.voice, "nova")
      assert.strictEqual(speech.model, "gpt-4o-mini-tts")
      assert.isTrue(speech.supportsInstructions)
      failsNaming(yield* read(settingsOf.SpeechConfig, { SPEECH_BASE_URL: "localhost:8880" }), "SPEECH_BASE_URL")
    }))

  it.effect("vision: LLM_VISION_MODELS lists models (`*` = all), VISION_MAX_IMAGE_MB in MiB, bad numbers name the variable", () =>
    Effect.gen(function*() {
      const vision = yield* Effect.flatMap(read(settingsOf.VisionConfig, { LLM_VISION_MODELS: "gpt-4o, claude-x", VISION_MAX_IMAGE_MB: "2", VISION_MODEL: "gpt-4o" }), Effect.fromResult)
      assert.isTrue(seesImages(vision, "gpt-4o"))
      assert.isFalse(seesImages(vision, "llama3"))
      assert.isTrue(seesImages({ visionModels: ["*"] }, "anything"))
      assert.strictEqual(vision.maxImageBytes, 2 * 1024 * 1024)
      assert.deepStrictEqual(vision.model, Option.some("gpt-4o"))
      failsNaming(yield* read(settingsOf.VisionConfig, { VISION_ANALYSIS_TIMEOUT_MS: "a minute" }), "VISION_ANALYSIS_TIMEOUT_MS")
      failsNaming(yield* read(settingsOf.VisionConfig, { VISION_MAX_IMAGE_MB: "big" }), "VISION_MAX_IMAGE_MB")
    }))
})
