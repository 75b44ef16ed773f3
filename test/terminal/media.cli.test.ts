import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Result } from "effect"
import { sniffImage } from "../../src/media/imageFormat"
import { readOggOpus } from "../../src/media/oggOpus"
import { comfyWorkflow } from "../media/backendKit"
import { startFakeComfyUi } from "../support/fakeMedia/fakeComfyUi"
import { startFakeOpenAiImages } from "../support/fakeMedia/fakeOpenAiImages"
import { startFakeSpeech } from "../support/fakeMedia/fakeSpeech"
import { startMediaServer } from "../support/fakeMedia/mediaServer"
import { type RecordedRequest, startFakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk, toolCallChunk, usageChunk } from "../support/fakeProviders/openAiCompatible"
import { imagesSent, visionHandler } from "../support/fakeProviders/vision"
import { pixelPng, pixelPngPath } from "../support/mediaFixtures"
import { runCli } from "./cliProcess"

/**
 * A chat model on the fake OpenAI-compatible server that calls `tool` with `args` on its first
 * pass and answers "Done." on the next; requests for `vision-model` are answered by describing
 * the images they carry.
 */
const chatThenTool = async (tool: string, args: Record<string, unknown>) => {
  const chat: Array<RecordedRequest> = []
  const llm = await startFakeLlmServer({
    handler: (request) => {
      if ((request.json as { model?: string }).model === "vision-model") return visionHandler("openai")(request)
      chat.push(request)
      return chat.length === 1
        ? openAiStream([toolCallChunk({ index: 0, id: "call_1", name: tool, arguments: JSON.stringify(args) }), finishChunk("tool_calls"), usageChunk(30, 8)])
        : openAiStream([textChunk("Done."), finishChunk("stop"), usageChunk(40, 2)])
    }
  })
  return { llm, chat }
}

const llmEnv = (url: string) => ({ LLM_PROVIDER: "openai-compatible", LLM_BASE_URL: `${url}/v1`, LLM_API_KEYS: "k", LLM_MODELS: "chat-model" })

interface Report {
  readonly status: string
  readonly toolCalls: ReadonlyArray<{ readonly name: string; readonly success: boolean; readonly response: Record<string, unknown> }>
}

const reportOf = (stdout: string): Report => {
  const lines = stdout.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, "exactly one JSON line on stdout")
  return JSON.parse(lines[0] ?? "") as Report
}

const withTempDir = async <A>(use: (dir: string) => Promise<A>): Promise<A> => {
  const dir = mkdtempSync(join(tmpdir(), "loopcord-media-"))
  try {
    return await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

describe("--once --json with media tools (issue 13 done-when, child process)", () => {
  it("IMAGE_BACKEND=openai: generate_image succeeds and the PNG is saved under MEDIA_DIR, its path in the response", () =>
    withTempDir(async (dir) => {
      const images = await startFakeOpenAiImages()
      const { chat, llm } = await chatThenTool("generate_image", { prompt: "a lighthouse at dusk" })
      const run = await runCli(["--once", "draw a lighthouse", "--json"], {
        ...llmEnv(llm.url), IMAGE_BACKEND: "openai", IMAGE_BASE_URL: images.baseUrl, IMAGE_API_KEY: "sk-img", MEDIA_DIR: dir
      }).finally(() => Promise.all([images.close(), llm.close()]))
      assert.strictEqual(run.code, 0, run.stderr)
      const report = reportOf(run.stdout)
      assert.strictEqual(report.status, "completed")
      const call = report.toolCalls[0]
      assert.strictEqual(call?.name, "generate_image")
      assert.isTrue(call?.success, JSON.stringify(call))
      const saved = String(call?.response["saved_to"])
      assert.isTrue(saved.startsWith(dir), saved)
      assert.deepStrictEqual([...readFileSync(saved)], [...pixelPng()])
      assert.include(run.stderr, `saved to ${saved}`)
      assert.strictEqual(images.requests[0]?.headers.authorization, "Bearer sk-img")
      const declared = (chat[0]?.json as { tools: ReadonlyArray<{ function: { name: string; parameters: { properties: object } } }> }).tools
      const generate = declared.find((tool) => tool.function.name === "generate_image")
      assert.deepStrictEqual(Object.keys(generate?.function.parameters.properties ?? {}), ["prompt", "aspect_ratio", "media_id", "target_identity", "denoise"])
    }), 120_000)

  it("IMAGE_BACKEND=comfyui with COMFYUI_WORKFLOW as a file: the job runs on the fake ComfyUI and the image is saved", () =>
    withTempDir(async (dir) => {
      const comfy = await startFakeComfyUi({ pollsUntilDone: 1 })
      const workflowPath = join(dir, "workflow.json")
      writeFileSync(workflowPath, JSON.stringify(comfyWorkflow({ negative: true })))
      const { chat, llm } = await chatThenTool("generate_image", { prompt: "a red fox", aspect_ratio: "2:3" })
      const run = await runCli(["--once", "draw a fox", "--json"], {
        ...llmEnv(llm.url), IMAGE_BACKEND: "comfyui", IMAGE_BASE_URL: comfy.origin, COMFYUI_WORKFLOW: workflowPath,
        IMAGE_DEFAULT_NEGATIVE_TAGS: "blurry", MEDIA_DIR: join(dir, "media")
      }).finally(() => Promise.all([comfy.close(), llm.close()]))
      assert.strictEqual(run.code, 0, run.stderr)
      const call = reportOf(run.stdout).toolCalls[0]
      assert.isTrue(call?.success, JSON.stringify(call))
      assert.strictEqual(sniffImage(readFileSync(String(call?.response["saved_to"])))?.mimeType, "image/png")
      const workflow = comfy.prompts[0] as Record<string, { inputs: Record<string, unknown> }>
      assert.strictEqual(workflow["5"]?.inputs["height"], 1216)
      assert.strictEqual(workflow["7"]?.inputs["text"], "blurry")
      const declared = (chat[0]?.json as { tools: ReadonlyArray<{ function: { name: string; parameters: { properties: object } } }> }).tools
      assert.deepStrictEqual(Object.keys(declared.find((tool) => tool.function.name === "generate_image")?.function.parameters.properties ?? {}), ["prompt", "aspect_ratio"])
    }), 120_000)

  it("generate_voice_message produces Ogg Opus, saved under MEDIA_DIR", () =>
    withTempDir(async (dir) => {
      const speech = await startFakeSpeech()
      const { llm } = await chatThenTool("generate_voice_message", { script: "Hello from the terminal.", title: "hello" })
      const run = await runCli(["--once", "say hello", "--json"], { ...llmEnv(llm.url), SPEECH_BASE_URL: speech.baseUrl, MEDIA_DIR: dir })
        .finally(() => Promise.all([speech.close(), llm.close()]))
      assert.strictEqual(run.code, 0, run.stderr)
      const call = reportOf(run.stdout).toolCalls[0]
      assert.isTrue(call?.success, JSON.stringify(call))
      assert.strictEqual(call?.response["duration_secs"], 1.5)
      const saved = String(call?.response["saved_to"])
      assert.isTrue(saved.endsWith(".ogg"))
      const info = readOggOpus(new Uint8Array(readFileSync(saved)))
      assert.isTrue(Result.isSuccess(info))
      assert.deepStrictEqual(speech.bodies()[0]?.["response_format"], "opus")
    }), 120_000)

  it("analyze_image answers on an --image file: the text-only chat model sees a placeholder, the vision model the bytes", async () => {
    const { chat, llm } = await chatThenTool("analyze_image", { question: "What colours?" })
    const run = await runCli(["--once", "what is in this picture?", "--json", "--image", pixelPngPath], { ...llmEnv(llm.url), VISION_MODEL: "vision-model" })
      .finally(() => llm.close())
    assert.strictEqual(run.code, 0, run.stderr)
    const call = reportOf(run.stdout).toolCalls[0]
    assert.strictEqual(call?.name, "analyze_image")
    assert.strictEqual(call?.response["analysis"], "I see 1 image: image/png 4×3.")
    const first = imagesSent("openai", chat[0]?.json)
    assert.strictEqual(first.images.length, 0, "chat-model is not in LLM_VISION_MODELS")
    assert.match(first.text, /\[image media_id=img_[a-z2-7]{8}: not visible to you; call analyze_image/)
    assert.notInclude(JSON.stringify(chat[0]?.json), "pixel.png", "never the file's path")
  }, 120_000)

  it("analyze_image answers on an image served by a loopback server with RUN_ENV=development (and refuses it in production)", async () => {
    const host = await startMediaServer((_request, response) => {
      response.writeHead(200, { "content-type": "image/png" })
      response.end(Buffer.from(pixelPng()))
    })
    const url = `${host.origin}/cat.png`
    const development = await chatThenTool("analyze_image", { url })
    const production = await chatThenTool("analyze_image", { url })
    const [dev, prod] = await Promise.all([
      runCli(["--once", `what is at ${url}?`, "--json"], { ...llmEnv(development.llm.url), VISION_MODEL: "vision-model", RUN_ENV: "development" }),
      runCli(["--once", `what is at ${url}?`, "--json"], { ...llmEnv(production.llm.url), VISION_MODEL: "vision-model" })
    ]).finally(() => Promise.all([host.close(), development.llm.close(), production.llm.close()]))
    assert.strictEqual(dev.code, 0, dev.stderr)
    assert.strictEqual(reportOf(dev.stdout).toolCalls[0]?.response["analysis"], "I see 1 image: image/png 4×3.")
    const refused = reportOf(prod.stdout).toolCalls[0]
    assert.isFalse(refused?.success)
    assert.match(String(refused?.response["reason"]), /^Could not load the image: img_[a-z0-9]+: The image URL was refused \(blocked: a private address\)$/)
    assert.include(prod.stderr, "FETCH_URL_ALLOW_PRIVATE_NETWORK", "the log keeps the address and the opt-in")
    assert.strictEqual(host.requests.length, 1, "only the development run reached the server")
  }, 120_000)

  it("a bad --image ends the run with one line naming the file, before any turn", async () => {
    const run = await runCli(["--once", "hi", "--json", "--image", "/no/such/file.png"], { LLM_PROVIDER: "scripted" })
    assert.strictEqual(run.code, 1)
    assert.strictEqual(run.stdout, "")
    assert.strictEqual(run.stderr.trimEnd().split("\n").at(-1), "loopcord: cannot attach /no/such/file.png: no such file")
    assert.notInclude(run.stderr, "    at ")
  }, 120_000)
})
