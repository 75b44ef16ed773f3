import { assert, describe, it } from "@effect/vitest"
import { Context, Duration, Effect, Fiber, Layer, Option, Ref } from "effect"
import { TestClock } from "effect/testing"
import { ImageConfig, type ImageSettings } from "../../../../src/config/ImageConfig"
import * as ComfyUi from "../../../../src/media/image/ComfyUi"
import { ImageBackend } from "../../../../src/media/image/ImageBackend"
import * as OpenAiImages from "../../../../src/media/image/OpenAiImages"
import { sniffImage } from "../../../../src/media/imageFormat"
import { MediaLibrary } from "../../../../src/media/MediaLibrary"
import { encodePng } from "../../../../src/media/png"
import { GuildImageTagsStore } from "../../../../src/store/GuildImageTagsStore"
import * as Stores from "../../../../src/store/Stores"
import { generateImageTool } from "../../../../src/tools/builtin/media/GenerateImageTool"
import type { AssemblyContext, Tool } from "../../../../src/tools/Tool"
import { initialTurnFlags } from "../../../../src/tools/TurnState"
import { comfyWorkflow, httpClient } from "../../../media/backendKit"
import { startFakeComfyUi } from "../../../support/fakeMedia/fakeComfyUi"
import { startFakeOpenAiImages } from "../../../support/fakeMedia/fakeOpenAiImages"
import { imageHost } from "../../../support/fakeMedia/imageHost"
import { callMediaTool, mediaServices, recordingOutlet } from "../../../support/fakeMedia/mediaToolKit"
import { pixelPng } from "../../../support/mediaFixtures"
import { webStack } from "../../../support/fakeWeb/webTestKit"

const scoped = <A>(start: () => Promise<A & { readonly close: () => Promise<void> }>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

/** generate_image over a backend layer and in-memory stores, built in the test's scope. */
const buildTool = (backend: "openai" | "comfyui", settings: Partial<ImageSettings>) =>
  Effect.gen(function*() {
    const config = ImageConfig.make({ backend: Option.some(backend), ...settings })
    const layer = (backend === "openai" ? OpenAiImages.layer : ComfyUi.layer).pipe(Layer.provideMerge(Layer.mergeAll(httpClient, config, webStack({ production: true }).layer)))
    const context = yield* Layer.build(Layer.merge(layer, Stores.layerMemory))
    const tool = yield* Effect.provide(generateImageTool, context)
    if (tool === undefined) throw new Error("generate_image was not created")
    return { tool, tags: Context.get(context, GuildImageTagsStore) }
  })

const assemble = (tool: Tool, guildId: string | undefined = "guild-1") => {
  const turn: AssemblyContext = { provider: "openai-compatible", model: "m", guildId, channelId: "c", flags: initialTurnFlags, availableToolNames: new Set([tool.name]) }
  return tool.assembleForContext === undefined ? Effect.succeed(tool) : Effect.orDie(tool.assembleForContext(turn))
}

const dataOf = (result: { readonly data?: unknown }) => result.data as Record<string, unknown>

describe("generate_image", () => {
  it.live("IMAGE_BACKEND=openai: a text-to-image call posts the image through the outlet, registers a media_id and replays its image to vision models", () =>
    Effect.gen(function*() {
      const server = yield* scoped(() => startFakeOpenAiImages())
      const { tool } = yield* buildTool("openai", { baseUrl: server.baseUrl, defaultPositiveTags: "watercolor, soft light", defaultNegativeTags: "blurry" })
      const { delivered, outlet } = yield* recordingOutlet()
      const { progress, result } = yield* callMediaTool(tool, { prompt: "a lighthouse", aspect_ratio: "16:9" }, { outlet })
      assert.isTrue(result.success, JSON.stringify(result))
      const data = dataOf(result)
      assert.strictEqual(data["status"], "image_generated")
      assert.match(String(data["media_id"]), /^img_/)
      assert.strictEqual(data["saved_to"], `/media/${String(data["media_id"])}.png`)
      assert.deepStrictEqual(result.imageMetadata?.imageUrls, [{ url: `media:${String(data["media_id"])}`, mimeType: "image/png" }])
      const [media] = yield* Ref.get(delivered)
      assert.strictEqual(media?.kind, "image")
      assert.deepStrictEqual(sniffImage(media?.bytes ?? new Uint8Array(0))?.mimeType, "image/png")
      const sent = JSON.parse(server.requests[0]?.body.toString() ?? "{}") as { prompt: string; size: string }
      assert.strictEqual(sent.prompt, "a lighthouse, watercolor, soft light", "positive tags are appended")
      assert.strictEqual(sent.size, "1536x1024")
      assert.strictEqual(progress.length, 1)
      assert.isTrue(progress[0]?.startsWith("Generating an image with OpenAI Images…"), progress[0])
      assert.include(progress[0], `Default image tags: "watercolor, soft light"`)
      assert.include(progress[0], "/image-tags", "the tag-setup hint")
      assert.notInclude(progress[0], "negative", "OpenAI takes no negative prompt: negative tags are never announced")
      const stored = yield* (yield* MediaLibrary).lookup(String(data["media_id"]))
      assert.isTrue(Option.isSome(stored))
    }).pipe(Effect.provide(mediaServices())))

  it.live("image-to-image from a media_id of the conversation: the reference is downloaded through safe_http and sent as the edit's image", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const server = yield* scoped(() => startFakeOpenAiImages())
      const { tool } = yield* buildTool("openai", { baseUrl: server.baseUrl })
      const entry = yield* (yield* MediaLibrary).register({ _tag: "Remote", url: `${host.origin}/pixel.png` })
      const { result, progress } = yield* callMediaTool(tool, { prompt: "at night", media_id: entry.id, target_identity: "the lighthouse" })
      assert.isTrue(result.success, JSON.stringify(result))
      assert.strictEqual(dataOf(result)["mode"], "image-to-image")
      assert.strictEqual(dataOf(result)["posted"], false, "no outlet: kept in the library only")
      assert.isTrue(server.requests.some((request) => request.url === "/v1/images/edits"))
      assert.include(progress[0], `image-to-image from ${entry.id}`)
      const failed = yield* callMediaTool(tool, { prompt: "x", media_id: "img_unknown0" })
      assert.isFalse(failed.result.success)
      assert.include(failed.result.error, "Unknown media_id")
      const html = yield* (yield* MediaLibrary).register({ _tag: "Remote", url: `${host.origin}/page.png` })
      const notImage = yield* callMediaTool(tool, { prompt: "x", media_id: html.id })
      assert.include(notImage.result.error, "is not an image")
    }).pipe(Effect.provide(mediaServices())))

  it.live("a reference on a private address is refused in production", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const server = yield* scoped(() => startFakeOpenAiImages())
      const { tool } = yield* buildTool("openai", { baseUrl: server.baseUrl })
      const entry = yield* (yield* MediaLibrary).register({ _tag: "Remote", url: `${host.origin}/pixel.png` })
      const { result } = yield* callMediaTool(tool, { prompt: "x", media_id: entry.id })
      assert.isFalse(result.success)
      assert.strictEqual(result.error, `Could not use ${entry.id}: The image URL was refused (blocked: a private address)`)
      assert.include(result.detail ?? "", "FETCH_URL_ALLOW_PRIVATE_NETWORK")
      assert.strictEqual(host.connections(), 0)
      assert.strictEqual(server.requests.length, 0)
    }).pipe(Effect.provide(mediaServices({ production: true }))))

  it.live("backend 4xx/5xx and a delivery failure are clear failed results", () =>
    Effect.gen(function*() {
      const failing = yield* scoped(() => startFakeOpenAiImages({ failWith: 503 }))
      const { tool } = yield* buildTool("openai", { baseUrl: failing.baseUrl })
      const { result } = yield* callMediaTool(tool, { prompt: "x" })
      assert.isFalse(result.success)
      // The status class, never the vendor's words (they stay in the detail).
      assert.strictEqual(result.message, "The image could not be generated: the image service failed (5xx). Tell the user; do not pretend an image was made.")
      assert.include(result.detail ?? "", "HTTP 503: scripted failure 503")
      const ok = yield* scoped(() => startFakeOpenAiImages())
      const good = yield* buildTool("openai", { baseUrl: ok.baseUrl })
      const { outlet } = yield* recordingOutlet({ fail: "Missing Permissions (Attach Files)" })
      const undelivered = yield* callMediaTool(good.tool, { prompt: "x" }, { outlet })
      assert.isFalse(undelivered.result.success)
      assert.match(undelivered.result.message ?? "", /^The image was generated \(media_id img_[a-z0-9]+\) but could not be posted here\.$/)
      assert.strictEqual(undelivered.result.detail, "Missing Permissions (Attach Files)")
    }).pipe(Effect.provide(mediaServices())))

  it.live("IMAGE_BACKEND=comfyui: negative tags reach the workflow and are announced; the server's tags replace the environment's", () =>
    Effect.gen(function*() {
      const comfy = yield* scoped(() => startFakeComfyUi({ pollsUntilDone: 1 }))
      const { tags, tool } = yield* buildTool("comfyui", {
        baseUrl: comfy.origin,
        comfyWorkflow: Option.some(comfyWorkflow({ negative: true })),
        pollInterval: Duration.millis(10),
        defaultPositiveTags: "env-style",
        defaultNegativeTags: "env-negative"
      })
      const plain = yield* callMediaTool(tool, { prompt: "a red fox" }, { context: { guildId: undefined } })
      assert.isTrue(plain.result.success, JSON.stringify(plain.result))
      assert.include(plain.progress[0], `negative tags: "env-negative"`)
      assert.include(plain.progress[0], "IMAGE_DEFAULT_POSITIVE_TAGS", "outside a server the hint names the settings")
      const first = comfy.prompts[0] as Record<string, { inputs: Record<string, unknown> }>
      assert.strictEqual(first["6"]?.inputs["text"], "masterpiece, a red fox, env-style")
      assert.strictEqual(first["7"]?.inputs["text"], "env-negative")
      yield* tags.set("guild-1", { positive: "ink sketch", negative: "color" })
      const assembled = yield* assemble(tool)
      assert.include(assembled?.description, `"ink sketch"`)
      assert.include(assembled?.description, `Default negative tags are applied: "color"`)
      yield* callMediaTool(tool, { prompt: "a red fox" })
      const second = comfy.prompts[1] as Record<string, { inputs: Record<string, unknown> }>
      assert.strictEqual(second["6"]?.inputs["text"], "masterpiece, a red fox, ink sketch")
      assert.strictEqual(second["7"]?.inputs["text"], "color")
      assert.deepStrictEqual(Object.keys(assembled?.parameters.properties ?? {}), ["prompt", "aspect_ratio"], "a text-only workflow")
    }).pipe(Effect.provide(mediaServices())))

  it.live("ComfyUI inpainting and outpainting: the canvas and mask are uploaded; an opaque or JPEG source and an unsupported mode are refused", () =>
    Effect.gen(function*() {
      const comfy = yield* scoped(() => startFakeComfyUi({ pollsUntilDone: 0 }))
      const { tool } = yield* buildTool("comfyui", { baseUrl: comfy.origin, comfyWorkflow: Option.some(comfyWorkflow({ image: true, mask: true })), pollInterval: Duration.millis(10) })
      const library = yield* MediaLibrary
      const pixels = new Uint8Array(8 * 8 * 4).fill(255)
      pixels[3] = 0
      const holed = yield* library.register({ _tag: "Stored", bytes: encodePng({ width: 8, height: 8, pixels }), mimeType: "image/png", filename: "h.png" })
      const inpaint = yield* callMediaTool(tool, { prompt: "a garden", media_id: holed.id, mask_prompt: "a rose", inpaint_preset: "subtle" })
      assert.isTrue(inpaint.result.success, JSON.stringify(inpaint.result))
      const workflow = comfy.prompts[0] as Record<string, { inputs: Record<string, unknown> }>
      assert.strictEqual(workflow["3"]?.inputs["denoise"], 0.35)
      assert.strictEqual(workflow["6"]?.inputs["text"], "masterpiece, a garden In the painted area: a rose.")
      assert.strictEqual(comfy.uploads.size, 2)
      const photo = yield* library.register({ _tag: "Stored", bytes: pixelPng(), mimeType: "image/png", filename: "p.png" })
      const outpaint = yield* callMediaTool(tool, { prompt: "wider", media_id: photo.id, outpaint: "right", outpaint_amount: 64 })
      assert.isTrue(outpaint.result.success, JSON.stringify(outpaint.result))
      const wide = comfy.prompts[1] as Record<string, { inputs: Record<string, unknown> }>
      assert.strictEqual(wide["5"]?.inputs["width"], 68)
      assert.strictEqual(wide["3"]?.inputs["denoise"], 1)
      const opaque = yield* callMediaTool(tool, { prompt: "x", media_id: photo.id, mask_prompt: "a hat" })
      assert.include(opaque.result.error, "transparent")
      const txt = yield* callMediaTool(tool, { prompt: "no source" })
      assert.include(txt.result.error, "only changes existing images")
    }).pipe(Effect.provide(mediaServices())))

  it.effect("a ComfyUI job that never finishes fails at IMAGE_TIMEOUT_MS (TestClock) and is taken off the queue", () =>
    Effect.gen(function*() {
      const comfy = yield* scoped(() => startFakeComfyUi({ neverFinish: true }))
      const { tool } = yield* buildTool("comfyui", { baseUrl: comfy.origin, comfyWorkflow: Option.some(comfyWorkflow()), timeout: Duration.seconds(30), pollInterval: Duration.seconds(1) })
      const fiber = yield* Effect.forkChild(callMediaTool(tool, { prompt: "a fox" }))
      yield* Effect.promise(() => until(() => comfy.requests.some((request) => request.url.startsWith("/history/"))))
      yield* TestClock.adjust("29 seconds")
      assert.isUndefined(fiber.pollUnsafe(), "still polling before the deadline")
      yield* TestClock.adjust("1 second")
      const { result } = yield* Fiber.join(fiber)
      assert.isFalse(result.success)
      assert.strictEqual(result.message, "The image could not be generated: the image service timed out. Tell the user; do not pretend an image was made.")
      assert.include(result.detail ?? "", "no image after 30s (IMAGE_TIMEOUT_MS)")
      yield* Effect.promise(() => until(() => comfy.deleted.length === 1))
    }).pipe(Effect.provide(mediaServices())))

  it.effect("a backend with no mode at all (a workflow without %prompt%): the tool is not created", () =>
    Effect.gen(function*() {
      const nothing = ImageBackend.of({
        name: "Nothing",
        capabilities: { textToImage: false, imageToImage: false, inpaint: false, outpaint: false, negativePrompt: false },
        generate: () => Effect.die(new Error("never called"))
      })
      const hidden = yield* generateImageTool.pipe(Effect.provideService(ImageBackend, nothing), Effect.provide(ImageConfig.make()))
      assert.isUndefined(hidden)
    }).pipe(Effect.provide(mediaServices())))
})

const until = async (predicate: () => boolean, timeoutMs = 5000) => {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("timed out waiting")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
