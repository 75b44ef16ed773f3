import type { HttpClient } from "effect/http"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer, Option, Redacted } from "effect"
import { TestClock } from "effect/testing"
import { VisionConfig } from "../../../../src/config/VisionConfig"
import type { ChatMessage } from "../../../../src/domain/ChatMessage"
import { MediaLibrary } from "../../../../src/media/MediaLibrary"
import { MessageImages } from "../../../../src/media/MessageImages"
import * as Anthropic from "../../../../src/provider/anthropic/Anthropic"
import * as Gemini from "../../../../src/provider/google/Gemini"
import { LanguageModel } from "../../../../src/provider/LanguageModel"
import * as OpenAiCompatible from "../../../../src/provider/openai/OpenAiCompatible"
import { hang, reply } from "../../../../src/provider/scripted/Script"
import * as Scripted from "../../../../src/provider/scripted/ScriptedModel"
import { analyzeImageTool } from "../../../../src/tools/builtin/media/AnalyzeImageTool"
import { buildModel } from "../../../provider/harness"
import { imageHost } from "../../../support/fakeMedia/imageHost"
import { callMediaTool, mediaServices } from "../../../support/fakeMedia/mediaToolKit"
import { fakeLlmServer } from "../../../support/fakeProviders/FakeLlmServer"
import { imagesSent, visionHandler, type VisionVendor } from "../../../support/fakeProviders/vision"
import { pixelPng } from "../../../support/mediaFixtures"

const route = { model: "vision-model", apiKey: Redacted.make("sk-vision") }

const buildTool = (model: LanguageModel["Service"], front: Layer.Layer<MessageImages> = MessageImages.none) =>
  analyzeImageTool(route).pipe(Effect.provideService(LanguageModel, model), Effect.provide(front))

const providers: ReadonlyArray<readonly [VisionVendor, (url: string) => Layer.Layer<LanguageModel, never, HttpClient.HttpClient>]> = [
  ["openai", (url) => OpenAiCompatible.layer({ baseUrl: `${url}/v1` })],
  ["anthropic", (url) => Anthropic.layer({ baseUrl: url })],
  ["gemini", (url) => Gemini.layer({ baseUrl: url })]
]

const trigger = (images: ChatMessage["images"], messageId = "message-1"): ChatMessage => ({ role: "user", content: "what is this?", messageId, ...(images === undefined ? {} : { images }) })

describe("analyze_image", () => {
  for (const [vendor, layer] of providers) {
    it.live(`[${vendor}] the image of the message being answered reaches the vision model inline, in ${vendor}'s wire form`, () =>
      Effect.gen(function*() {
        const host = yield* imageHost()
        const llm = yield* fakeLlmServer({ handler: visionHandler(vendor) })
        const tool = yield* buildTool(yield* buildModel(layer(llm.url)))
        const { progress, result } = yield* callMediaTool(tool, { question: "What colours?" }, { contextItems: [trigger([{ url: `${host.origin}/pixel.png`, mimeType: "image/png" }])] })
        assert.isTrue(result.success, JSON.stringify(result))
        const data = result.data as { analysis: string; media_ids: ReadonlyArray<string> }
        assert.strictEqual(data.analysis, "I see 1 image: image/png 4×3.")
        assert.match(data.media_ids[0] ?? "", /^img_/)
        assert.deepStrictEqual(progress, ["Looking at the image…"])
        const seen = imagesSent(vendor, llm.requests[0]?.json)
        assert.strictEqual(seen.images.length, 1)
        assert.deepStrictEqual([...(seen.images[0]?.bytes ?? [])], [...pixelPng()])
        assert.include(seen.text, "What colours?")
        assert.strictEqual(seen.urls.length, 0, "inline, never a URL the vendor would fetch")
        if (vendor === "openai") assert.strictEqual((llm.requests[0]?.json as { model: string }).model, "vision-model")
      }).pipe(Effect.provide(mediaServices())))
  }

  it.live("a text-only reply falls back one level to the message it replies to (asked of the front); a media_id or a url picks one image", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const llm = yield* fakeLlmServer({ handler: visionHandler("openai") })
      const front = Layer.succeed(MessageImages, {
        lookup: (_channel, id) =>
          Effect.succeed(
            id === "message-1"
              ? Option.some({ images: [], replyTo: "original" })
              : id === "original"
              ? Option.some({ images: [{ url: `${host.origin}/pixel.png` }], replyTo: "older" })
              : Option.none()
          )
      })
      const tool = yield* buildTool(yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${llm.url}/v1` })), front)
      const fallback = yield* callMediaTool(tool, {}, { contextItems: [trigger(undefined)] })
      assert.isTrue(fallback.result.success, JSON.stringify(fallback.result))
      const entry = yield* (yield* MediaLibrary).register({ _tag: "Remote", url: `${host.origin}/pixel.png` })
      const byId = yield* callMediaTool(tool, { media_id: entry.id })
      assert.deepStrictEqual((byId.result.data as { media_ids: ReadonlyArray<string> }).media_ids, [entry.id])
      const byUrl = yield* callMediaTool(tool, { url: `${host.origin}/pixel.png`, question: "colours?" })
      assert.strictEqual((byUrl.result.data as { analysis: string }).analysis, "I see 1 image: image/png 4×3.")
      assert.include((yield* callMediaTool(tool, { url: "file:///etc/passwd" })).result.error, "http(s)")
      const none = yield* callMediaTool(tool, { message_id: "older" })
      assert.isFalse(none.result.success)
      assert.include(none.result.error, "has no image")
    }).pipe(Effect.provide(mediaServices())))

  it.live("non-image bytes, an oversize image, a private address in production and an unknown media_id are clear failures", () =>
    Effect.gen(function*() {
      const host = yield* imageHost({ bigBytes: 2 * 1024 * 1024 })
      const model = yield* Effect.provide(LanguageModel, Scripted.layer({ script: () => reply("should not be asked") }))
      const tool = yield* buildTool(model)
      const notImage = yield* callMediaTool(tool, {}, { contextItems: [trigger([{ url: `${host.origin}/page.png` }])] })
      assert.include(notImage.result.error, "is not an image")
      const big = yield* callMediaTool(tool, {}, { contextItems: [trigger([{ url: `${host.origin}/big.png` }])] })
      assert.include(big.result.error, "VISION_MAX_IMAGE_MB")
      const privateUrl = yield* callMediaTool(tool, { url: "http://169.254.169.254/latest/meta-data/x.png" })
      assert.include(privateUrl.result.error, "The image URL was refused (blocked: an address that is never reached)", "the metadata floor holds even in development")
      assert.notInclude(privateUrl.result.error ?? "", "169.254")
      assert.include(privateUrl.result.detail ?? "", "never fetched")
      const unknown = yield* callMediaTool(tool, { media_id: "img_doesnotexist" })
      assert.include(unknown.result.error, "Unknown media_id")
    }).pipe(Effect.provide(mediaServices({ vision: { maxImageBytes: 1024 * 1024 } }))))

  it.live("in production an image on a private address is refused before any byte is sent", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const model = yield* Effect.provide(LanguageModel, Scripted.layer({ script: () => reply("unused") }))
      const { result } = yield* callMediaTool(yield* buildTool(model), {}, { contextItems: [trigger([{ url: `${host.origin}/pixel.png` }])] })
      assert.match(result.error ?? "", /^Could not load the image: img_[a-z0-9]+: The image URL was refused \(blocked: a private address\)$/)
      assert.include(result.detail ?? "", "address 127.0.0.1 is loopback")
      assert.strictEqual(host.connections(), 0)
    }).pipe(Effect.provide(mediaServices({ production: true }))))

  it.effect("one VISION_ANALYSIS_TIMEOUT_MS deadline covers the download and inference (TestClock)", () =>
    Effect.gen(function*() {
      const library = yield* MediaLibrary
      const stored = yield* library.register({ _tag: "Stored", bytes: pixelPng(), mimeType: "image/png", filename: "p.png" })
      const model = yield* Effect.provide(LanguageModel, Scripted.layer({ script: () => [hang] }))
      const tool = yield* buildTool(model)
      const fiber = yield* Effect.forkChild(callMediaTool(tool, { media_id: stored.id }))
      yield* TestClock.adjust("59 seconds")
      assert.isUndefined(fiber.pollUnsafe(), "the model is still thinking before the deadline")
      yield* TestClock.adjust("1 second")
      const { result } = yield* Fiber.join(fiber)
      assert.isFalse(result.success)
      assert.include(result.error, "timed out after 60s (VISION_ANALYSIS_TIMEOUT_MS)")
    }).pipe(Effect.provide(mediaServices())))

  it.effect("the deadline also holds over a download that never answers", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const model = yield* Effect.provide(LanguageModel, Scripted.layer({ script: () => reply("unused") }))
      const tool = yield* buildTool(model)
      const fiber = yield* Effect.forkChild(callMediaTool(tool, {}, { contextItems: [trigger([{ url: `${host.origin}/slow.png` }])] }))
      yield* Effect.promise(() => until(() => host.requests.some((request) => request.url === "/slow.png")))
      yield* TestClock.adjust("10 seconds")
      const { result } = yield* Fiber.join(fiber)
      assert.include(result.error, "timed out after 10s")
    }).pipe(Effect.provide(Layer.merge(mediaServices(), VisionConfig.make({ analysisTimeout: Duration.seconds(10) })))))
})

const until = async (predicate: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
