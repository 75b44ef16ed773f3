import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { comfyCapabilities, fillWorkflow, placeholdersIn } from "../../src/media/image/comfyWorkflow"
import type { ImageJob } from "../../src/media/image/ImageBackend"
import { jobState } from "../../src/media/image/ComfyUi"
import { startFakeComfyUi } from "../support/fakeMedia/fakeComfyUi"
import { pixelPng } from "../support/mediaFixtures"
import { comfyBackend, comfyWorkflow } from "./backendKit"

const fake = (options: Parameters<typeof startFakeComfyUi>[0] = {}) =>
  Effect.acquireRelease(Effect.promise(() => startFakeComfyUi(options)), (server) => Effect.promise(() => server.close()))

const txt2img: ImageJob = { mode: "txt2img", prompt: "a red fox", negativePrompt: "blurry, lowres", aspectRatio: "2:3", seed: 4242 }
const fast = { pollInterval: Duration.millis(10) }

type Node = { readonly inputs: Record<string, unknown> }

describe("ComfyUI workflow placeholders (pure)", () => {
  it("a mode is supported exactly when its placeholders are present", () => {
    assert.deepStrictEqual(comfyCapabilities(comfyWorkflow()), { textToImage: true, imageToImage: false, inpaint: false, outpaint: false, negativePrompt: false })
    assert.deepStrictEqual(comfyCapabilities(comfyWorkflow({ image: true, negative: true })), { textToImage: false, imageToImage: true, inpaint: false, outpaint: false, negativePrompt: true })
    assert.deepStrictEqual(comfyCapabilities(comfyWorkflow({ image: true, mask: true })), { textToImage: false, imageToImage: false, inpaint: true, outpaint: true, negativePrompt: false })
    assert.deepStrictEqual(comfyCapabilities({ "1": { class_type: "SaveImage", inputs: {} } }), { textToImage: false, imageToImage: false, inpaint: false, outpaint: false, negativePrompt: false })
    assert.deepStrictEqual([...placeholdersIn(comfyWorkflow({ negative: true }))].sort(), ["denoise", "height", "negative_prompt", "prompt", "seed", "width"])
  })

  it("whole numeric placeholders become numbers; text placeholders are replaced inside their strings", () => {
    const filled = fillWorkflow(comfyWorkflow({ negative: true, image: true }), {
      prompt: "a fox", negative_prompt: "blurry", seed: 9, width: 832, height: 1216, denoise: 0.55, image: "in/ref.png", mask: ""
    }) as Record<string, Node>
    assert.strictEqual(filled["3"]?.inputs["seed"], 9)
    assert.strictEqual(filled["3"]?.inputs["denoise"], 0.55)
    assert.strictEqual(filled["5"]?.inputs["width"], 832)
    assert.strictEqual(filled["6"]?.inputs["text"], "masterpiece, a fox")
    assert.strictEqual(filled["7"]?.inputs["text"], "blurry")
    assert.strictEqual(filled["10"]?.inputs["image"], "in/ref.png")
    assert.deepStrictEqual(filled["3"]?.inputs["model"], ["4", 0], "node links stay links")
  })

  it("history states: running, failed with the node's message, done with the output image", () => {
    assert.strictEqual(jobState(undefined)._tag, "Running")
    const failed = jobState({ outputs: {}, status: { status_str: "error", messages: [["execution_error", { node_type: "KSampler", exception_message: "boom" }]] } })
    assert.deepStrictEqual(failed, { _tag: "Failed", detail: "KSampler: boom" })
    const done = jobState({ outputs: { "9": { images: [{ filename: "a.png", subfolder: "x", type: "temp" }, { filename: "b.png", subfolder: "", type: "output" }] } }, status: { completed: true } })
    assert.deepStrictEqual(done, { _tag: "Done", image: { filename: "b.png", subfolder: "", type: "output" } })
  })
})

describe("ComfyUI backend (IMAGE_BACKEND=comfyui) against a fake ComfyUI", () => {
  it.live("text-to-image: POST /prompt with the filled workflow, /history polled until done, /view read", () =>
    Effect.gen(function*() {
      const server = yield* fake({ pollsUntilDone: 2 })
      const backend = yield* comfyBackend(server.origin, comfyWorkflow({ negative: true }), fast)
      const image = yield* backend.generate(txt2img)
      assert.deepStrictEqual([...image.bytes], [...pixelPng()])
      const [workflow] = server.prompts as ReadonlyArray<Record<string, Node>>
      assert.strictEqual(workflow?.["3"]?.inputs["seed"], 4242)
      assert.strictEqual(workflow?.["5"]?.inputs["width"], 832)
      assert.strictEqual(workflow?.["5"]?.inputs["height"], 1216)
      assert.strictEqual(workflow?.["6"]?.inputs["text"], "masterpiece, a red fox")
      assert.strictEqual(workflow?.["7"]?.inputs["text"], "blurry, lowres")
      assert.strictEqual(workflow?.["3"]?.inputs["denoise"], 1)
      const paths = server.requests.map((request) => `${request.method} ${new URL(request.url, "http://x").pathname}`)
      assert.deepStrictEqual(paths.filter((path) => path.startsWith("GET /history")).length, 3)
      assert.deepStrictEqual(paths.at(-1), "GET /view")
    }))

  it.live("image-to-image uploads the reference; inpainting uploads the canvas and its mask, both named in the workflow", () =>
    Effect.gen(function*() {
      const server = yield* fake({ pollsUntilDone: 0 })
      const img2img = yield* comfyBackend(server.origin, comfyWorkflow({ image: true }), fast)
      const reference = { bytes: pixelPng(), format: { mimeType: "image/png" as const, extension: "png" as const } }
      yield* img2img.generate({ ...txt2img, mode: "img2img", image: reference, denoise: 0.4 })
      const first = server.prompts[0] as Record<string, Node>
      assert.strictEqual(first["10"]?.inputs["image"], "loopcord-4242.png")
      assert.strictEqual(first["3"]?.inputs["denoise"], 0.4)
      assert.deepStrictEqual([...(server.uploads.get("loopcord-4242.png") ?? [])], [...pixelPng()])
      const inpaint = yield* comfyBackend(server.origin, comfyWorkflow({ image: true, mask: true }), fast)
      yield* inpaint.generate({ ...txt2img, seed: 5, mode: "inpaint", canvas: { image: pixelPng(), mask: pixelPng(), width: 4, height: 3 }, denoise: 0.8 })
      const second = server.prompts[1] as Record<string, Node>
      assert.strictEqual(second["10"]?.inputs["image"], "loopcord-5.png")
      assert.strictEqual(second["11"]?.inputs["image"], "loopcord-5-mask.png")
      assert.strictEqual(second["5"]?.inputs["width"], 4, "the canvas size, not the aspect ratio's")
    }))

  it.live("a failed job, a refused workflow and non-image output are typed failures", () =>
    Effect.gen(function*() {
      const failing = yield* fake({ failJob: true, pollsUntilDone: 0 })
      const failed = yield* Effect.flip((yield* comfyBackend(failing.origin, comfyWorkflow(), fast)).generate(txt2img))
      assert.strictEqual(failed.reason, "job_failed")
      assert.include(failed.detail, "CUDA out of memory")
      const rejecting = yield* fake({ rejectPrompt: true })
      const rejected = yield* Effect.flip((yield* comfyBackend(rejecting.origin, comfyWorkflow(), fast)).generate(txt2img))
      assert.strictEqual(rejected.reason, "http_status")
      assert.include(rejected.detail, "Prompt outputs failed validation")
      const html = yield* fake({ pollsUntilDone: 0, outputBytes: new Uint8Array(Buffer.from("<html>")) })
      assert.strictEqual((yield* Effect.flip((yield* comfyBackend(html.origin, comfyWorkflow(), fast)).generate(txt2img))).reason, "wrong_media")
    }))

  it.effect("a job that never finishes keeps polling on the Clock; interrupted, it is taken off the queue", () =>
    Effect.gen(function*() {
      const server = yield* fake({ neverFinish: true })
      const backend = yield* comfyBackend(server.origin, comfyWorkflow(), { pollInterval: Duration.seconds(1) })
      const fiber = yield* Effect.forkChild(backend.generate(txt2img))
      const polls = () => server.requests.filter((request) => request.url.startsWith("/history/")).length
      for (let second = 1; second <= 3; second++) {
        yield* Effect.promise(() => waitFor(() => polls() >= second))
        yield* TestClock.adjust("1 second")
      }
      yield* Effect.promise(() => waitFor(() => polls() >= 4))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => waitFor(() => server.deleted.length === 1))
      assert.strictEqual(server.deleted.length, 1)
    }))
})

const waitFor = async (predicate: () => boolean, timeoutMs = 5000) => {
  const until = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > until) throw new Error("timed out waiting")
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}
