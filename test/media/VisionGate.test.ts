import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Redacted, Ref, Stream } from "effect"
import type { ChatMessage } from "../../src/domain/ChatMessage"
import { FunctionCall } from "../../src/domain/FunctionCall"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { ToolHistoryEntry } from "../../src/domain/ToolHistoryEntry"
import { MediaLibrary } from "../../src/media/MediaLibrary"
import * as VisionGate from "../../src/media/VisionGate"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import { LanguageModel } from "../../src/provider/LanguageModel"
import { chatCompletionsBody } from "../../src/provider/openai/chatCompletionsRequest"
import { imageHost } from "../support/fakeMedia/imageHost"
import { mediaServices } from "../support/fakeMedia/mediaToolKit"
import { pixelPng } from "../support/mediaFixtures"

/** A provider that records each request it is given. */
const recordingModel = Effect.map(Ref.make<ReadonlyArray<GenerationRequest>>([]), (seen) => ({
  seen,
  layer: Layer.succeed(LanguageModel, {
    name: "recording",
    stream: (request: GenerationRequest) => Stream.fromEffect(Effect.as(Ref.update(seen, (all) => [...all, request]), ProviderEvent.Finish({ reason: "stop" })))
  })
}))

const request = (model: string, messages: ReadonlyArray<ChatMessage>, overrides: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model,
  apiKey: Redacted.make("k"),
  system: "",
  messages,
  tools: [{ name: "analyze_image", description: "look", parameters: { type: "object", properties: {} } }],
  functionHistory: [],
  ...overrides
})

/** The gate over a recording provider; the media services come from the test (`withVision`). */
const gated = Effect.gen(function*() {
    const recording = yield* recordingModel
    const model = Context.get(yield* Layer.build(VisionGate.layer.pipe(Layer.provide(recording.layer))), LanguageModel)
    const send = (req: GenerationRequest) =>
      Effect.flatMap(Stream.runDrain(model.stream(req)), () => Effect.map(Ref.get(recording.seen), (all) => all[all.length - 1] as GenerationRequest))
    return { send }
  })

const withVision = (visionModels: ReadonlyArray<string>, maxImagesPerRequest = 8) => mediaServices({ vision: { visionModels, maxImagesPerRequest } })

describe("images in the conversation (LLM_VISION_MODELS)", () => {
  it.live("a vision model gets the images inline with their media_id lines; a text-only fallback of the same conversation gets placeholders only", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const { send } = yield* gated
      const messages: ReadonlyArray<ChatMessage> = [
        { role: "user", content: "look at this", name: "alice", images: [{ url: `${host.origin}/pixel.png`, mimeType: "image/png" }] },
        { role: "assistant", content: "Here you go", images: [{ url: `${host.origin}/pixel.png?posted` }] }
      ]
      const vision = yield* send(request("gpt-vision", messages))
      const [user, assistant] = vision.messages
      assert.strictEqual(user?.images?.length, 1)
      assert.match(user?.images?.[0]?.url ?? "", /^data:image\/png;base64,/)
      assert.deepStrictEqual([...Buffer.from((user?.images?.[0]?.url ?? "").split(",")[1] ?? "", "base64")], [...pixelPng()])
      assert.match(user?.content ?? "", /^look at this\n\[image media_id=img_[a-z2-7]{8}\]$/)
      assert.isUndefined(assistant?.images, "assistant turns never carry image parts")
      assert.match(assistant?.content ?? "", /\[you posted image media_id=img_/)
      const fallback = yield* send(request("llama-text", messages))
      assert.isUndefined(fallback.messages[0]?.images, "the fallback never receives the primary's images")
      const id = /media_id=(img_[a-z2-7]+)/.exec(user?.content ?? "")?.[1] ?? ""
      assert.include(fallback.messages[0]?.content, `[image media_id=${id}: not visible to you; call analyze_image with this media_id to see it]`)
      assert.notInclude(JSON.stringify(fallback), host.origin, "no URL reaches a model")
      assert.notInclude(JSON.stringify(vision.messages.map((message) => message.content)), host.origin)
      const noTool = yield* send(request("llama-text", messages, { tools: [] }))
      assert.include(noTool.messages[0]?.content, `[image media_id=${id}: not visible to you]`)
    }).pipe(Effect.provide(withVision(["gpt-vision"]))))

  it.live("`*` means every model; only the newest images fit the budget; an image that fails to load is a placeholder with the reason", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const { send } = yield* gated
      const seen = yield* send(request("any-model", [
        { role: "user", content: "old", images: [{ url: `${host.origin}/pixel.png?old` }] },
        { role: "user", content: "new", images: [{ url: `${host.origin}/pixel.png?new` }] },
        { role: "user", content: "broken", images: [] }
      ]))
      assert.isUndefined(seen.messages[0]?.images)
      assert.include(seen.messages[0]?.content, "not visible to you")
      assert.strictEqual(seen.messages[1]?.images?.length, 1)
      const broken = yield* send(request("any-model", [{ role: "user", content: "this", images: [{ url: `${host.origin}/page.png` }] }]))
      assert.include(broken.messages[0]?.content, "could not be loaded: The file at")
      assert.isUndefined(broken.messages[0]?.images)
      const before = host.requests.length
      const huge = yield* send(request("any-model", [{ role: "user", content: "big", images: [{ url: `${host.origin}/pixel.png?huge`, sizeBytes: 50 * 1024 * 1024 }] }]))
      assert.include(huge.messages[0]?.content, "could not be loaded: larger than 20 MB (VISION_MAX_IMAGE_MB)")
      assert.strictEqual(host.requests.length, before, "a size the front reported over the cap is never downloaded")
    }).pipe(Effect.provide(withVision(["*"], 1))))

  it.live("tool-result images: resolved inline for a vision model; dropped for a text-only one, so no synthetic user message is added", () =>
    Effect.gen(function*() {
      const library = yield* MediaLibrary
      const stored = yield* library.register({ _tag: "Stored", bytes: pixelPng(), mimeType: "image/png", filename: "g.png" })
      const entry = ToolHistoryEntry({
        functionCall: FunctionCall({ name: "generate_image", args: { prompt: "a fox" }, id: "call_1" }),
        functionResponse: { name: "generate_image", response: { result: { status: "image_generated", media_id: stored.id } } },
        imageMetadata: { imageUrls: [{ url: `media:${stored.id}`, mimeType: "image/png" }], totalSent: 1, totalValidated: 1 }
      })
      const { send } = yield* gated
      const options = { maxTokensParameter: "max_tokens" as const, parallelToolCalls: undefined, includeUsage: false, extraBody: undefined }
      const vision = yield* send(request("gpt-vision", [{ role: "user", content: "draw" }], { functionHistory: [entry] }))
      const visionBody = chatCompletionsBody(vision, options) as unknown as { messages: ReadonlyArray<{ role: string; content: unknown }> }
      const carrier = visionBody.messages.at(-1)
      assert.strictEqual(carrier?.role, "user")
      assert.include(JSON.stringify(carrier?.content), "data:image/png;base64,")
      const text = yield* send(request("llama-text", [{ role: "user", content: "draw" }], { functionHistory: [entry] }))
      const textBody = chatCompletionsBody(text, options) as unknown as { messages: ReadonlyArray<{ role: string }> }
      assert.deepStrictEqual(textBody.messages.map((message) => message.role), ["user", "assistant", "tool"], "no carrier message for a text-only model")
    }).pipe(Effect.provide(withVision(["gpt-vision"]))))
})
