import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ImageJob } from "../../src/media/image/ImageBackend"
import { openAiSize } from "../../src/media/image/OpenAiImages"
import { sniffImage } from "../../src/media/imageFormat"
import { startFakeOpenAiImages } from "../support/fakeMedia/fakeOpenAiImages"
import { parseMultipart } from "../support/multipart"
import { pixelPng } from "../support/mediaFixtures"
import { key, openAiImagesBackend, openAiImagesWithStack } from "./backendKit"

const txt2img: ImageJob = { mode: "txt2img", prompt: "a lighthouse at dusk", negativePrompt: undefined, aspectRatio: "16:9", seed: 7 }
const fake = (options: Parameters<typeof startFakeOpenAiImages>[0] = {}) =>
  Effect.acquireRelease(Effect.promise(() => startFakeOpenAiImages(options)), (server) => Effect.promise(() => server.close()))

describe("OpenAI Images backend (IMAGE_BACKEND=openai)", () => {
  it.effect("text-to-image: POST /images/generations with model, prompt, size and the key; the b64_json image comes back", () =>
    Effect.gen(function*() {
      const server = yield* fake()
      const backend = yield* openAiImagesBackend({ baseUrl: server.baseUrl, apiKey: key("sk-img"), model: "gpt-image-1" })
      assert.deepStrictEqual(backend.capabilities, { textToImage: true, imageToImage: true, inpaint: false, outpaint: false, negativePrompt: false })
      const image = yield* backend.generate(txt2img)
      assert.deepStrictEqual(sniffImage(image.bytes), image.format)
      assert.strictEqual(image.revisedPrompt, "revised: a lighthouse at dusk")
      const [request] = server.requests
      assert.strictEqual(request?.url, "/v1/images/generations")
      assert.strictEqual(request?.headers.authorization, "Bearer sk-img")
      assert.deepStrictEqual(JSON.parse(request?.body.toString() ?? ""), { model: "gpt-image-1", prompt: "a lighthouse at dusk", n: 1, size: "1536x1024" })
    }))

  it.effect("image-to-image: a multipart POST /images/edits with the reference as the image file; a url answer is downloaded; dall-e asks for b64_json", () =>
    Effect.gen(function*() {
      const server = yield* fake({ answer: "url" })
      const backend = yield* openAiImagesBackend({ baseUrl: server.baseUrl, model: "dall-e-2" })
      const reference = { bytes: pixelPng(), format: { mimeType: "image/png" as const, extension: "png" as const } }
      const image = yield* backend.generate({ mode: "img2img", prompt: "make it night", negativePrompt: undefined, aspectRatio: "1:1", seed: 1, image: reference, denoise: 0.6 })
      assert.strictEqual(image.format.mimeType, "image/png")
      const edit = server.requests.find((request) => request.url === "/v1/images/edits")
      assert.isDefined(edit)
      assert.isUndefined(edit?.headers.authorization, "no key configured, none sent")
      const parts = parseMultipart(edit?.headers["content-type"], edit?.body ?? Buffer.alloc(0))
      const byName = new Map(parts.map((part) => [part.name, part]))
      assert.strictEqual(byName.get("prompt")?.data.toString(), "make it night")
      assert.strictEqual(byName.get("model")?.data.toString(), "dall-e-2")
      assert.strictEqual(byName.get("response_format")?.data.toString(), "b64_json")
      assert.strictEqual(byName.get("image")?.filename, "reference.png")
      assert.strictEqual(byName.get("image")?.contentType, "image/png")
      assert.deepStrictEqual([...(byName.get("image")?.data ?? [])], [...pixelPng()])
      assert.isTrue(server.requests.some((request) => request.method === "GET" && request.url === "/files/generated.png"))
    }))

  it.effect("4xx/5xx carry the vendor's message; non-image bytes and inpaint are typed failures", () =>
    Effect.gen(function*() {
      for (const status of [400, 500]) {
        const server = yield* fake({ failWith: status })
        const error = yield* Effect.flip((yield* openAiImagesBackend({ baseUrl: server.baseUrl })).generate(txt2img))
        assert.strictEqual(error.reason, "http_status")
        assert.strictEqual(error.status, status)
        assert.include(error.detail, `scripted failure ${status}`)
      }
      const html = yield* fake({ imageBytes: new Uint8Array(Buffer.from("<html>nope</html>")) })
      const wrong = yield* Effect.flip((yield* openAiImagesBackend({ baseUrl: html.baseUrl })).generate(txt2img))
      assert.strictEqual(wrong.reason, "wrong_media")
      const canvas = { image: pixelPng(), mask: pixelPng(), width: 4, height: 3 }
      const unsupported = yield* Effect.flip((yield* openAiImagesBackend({ baseUrl: html.baseUrl })).generate({ ...txt2img, mode: "inpaint", canvas, denoise: 1 }))
      assert.strictEqual(unsupported.reason, "unsupported")
    }))

  it.effect("[issue 25] a link on the backend's own host is fetched through safe_http even in production (the operator's host)", () =>
    Effect.gen(function*() {
      const server = yield* fake({ answer: "url" })
      const { backend, connector } = yield* openAiImagesWithStack({ baseUrl: server.baseUrl, model: "dall-e-3" })
      const image = yield* backend.generate(txt2img)
      assert.strictEqual(image.format.mimeType, "image/png")
      // The link went through the pinned connector (safe_http), to the validated address only.
      assert.deepStrictEqual(connector.attempts.map((attempt) => attempt.address), ["127.0.0.1"])
    }))

  it.effect("[issue 25] a link to the metadata service is refused before any connection; the model would read the class only", () =>
    Effect.gen(function*() {
      const server = yield* fake({ answer: "url", link: "http://169.254.169.254/latest/meta-data/iam/security-credentials/" })
      for (const production of [true, false]) {
        const { backend, connector } = yield* openAiImagesWithStack({ baseUrl: server.baseUrl, model: "dall-e-3" }, { production })
        const error = yield* Effect.flip(backend.generate(txt2img))
        assert.strictEqual(error.reason, "blocked_link")
        assert.strictEqual(error.failureText("image"), "the image service returned a link that is not fetched")
        assert.include(error.detail, "169.254.169.254")
        assert.deepStrictEqual(connector.attempts, [])
      }
    }))

  it.effect("[issue 25] a link to another host on a private address follows the fetch policy: refused in production, fetched in development", () =>
    Effect.gen(function*() {
      const server = yield* fake({ answer: "url", link: "{origin}/files/generated.png" })
      const port = new URL(server.baseUrl).port
      const elsewhere = yield* fake({ answer: "url", link: `http://cdn.internal:${port}/files/generated.png` })
      const dns = { "cdn.internal": ["127.0.0.1"] }
      const refused = yield* Effect.flip((yield* openAiImagesWithStack({ baseUrl: elsewhere.baseUrl }, { production: true, dns })).backend.generate(txt2img))
      assert.strictEqual(refused.reason, "blocked_link")
      assert.include(refused.detail, "cdn.internal")
      const allowed = yield* (yield* openAiImagesWithStack({ baseUrl: elsewhere.baseUrl }, { production: false, dns })).backend.generate(txt2img)
      assert.strictEqual(allowed.format.mimeType, "image/png")
    }))

  it.effect("[issue 25] a link answering an error: the status only, its body is never read into the error", () =>
    Effect.gen(function*() {
      const server = yield* fake({ answer: "url", link: "{origin}/files/missing.png" })
      const error = yield* Effect.flip((yield* openAiImagesBackend({ baseUrl: server.baseUrl })).generate(txt2img))
      assert.strictEqual(error.reason, "http_status")
      assert.strictEqual(error.detail, "the image link answered HTTP 404")
      assert.strictEqual(error.failureText("image"), "the image service refused the request (HTTP 404)")
    }))

  it("sizes follow the model: gpt-image and dall-e-3 fixed sizes, others WxH", () => {
    assert.strictEqual(openAiSize("gpt-image-1", "9:16"), "1024x1536")
    assert.strictEqual(openAiSize("dall-e-3", "16:9"), "1792x1024")
    assert.strictEqual(openAiSize("stablediffusion", "3:2"), "1216x832")
  })
})
