import { randomUUID } from "node:crypto"
import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import { type ComfyWorkflowJson, ImageConfig, type ImageSettings } from "../../config/ImageConfig"
import { expectOk, field, readBytes, readJson, send, stringField, withoutTracerPropagation } from "../backendHttp"
import { sniffImage } from "../imageFormat"
import { withMultipart } from "../multipartBody"
import { MediaBackendError } from "../MediaBackendError"
import { comfyCapabilities, fillWorkflow } from "./comfyWorkflow"
import { diffusionSize, type GeneratedImage, ImageBackend, type ImageJob } from "./ImageBackend"

const NAME = "ComfyUI"

/** An image a finished job wrote, as `/view` wants it. */
interface OutputImage {
  readonly filename: string
  readonly subfolder: string
  readonly type: string
}

/** The first image among a history entry's outputs (SaveImage writes `type: output`). */
const outputImage = (entry: unknown): OutputImage | undefined => {
  const outputs = field(entry, "outputs")
  if (typeof outputs !== "object" || outputs === null) return undefined
  const images: Array<OutputImage> = []
  for (const node of Object.values(outputs)) {
    const list = field(node, "images")
    if (!Array.isArray(list)) continue
    for (const image of list) {
      const filename = field(image, "filename")
      if (typeof filename !== "string" || filename === "") continue
      const subfolder = field(image, "subfolder")
      const type = field(image, "type")
      images.push({ filename, subfolder: typeof subfolder === "string" ? subfolder : "", type: typeof type === "string" ? type : "output" })
    }
  }
  return images.find((image) => image.type === "output") ?? images[0]
}

/** How a history entry stands: still running, failed with messages, or done. */
export const jobState = (entry: unknown): { readonly _tag: "Running" } | { readonly _tag: "Failed"; readonly detail: string } | { readonly _tag: "Done"; readonly image: OutputImage | undefined } => {
  if (entry === undefined) return { _tag: "Running" }
  const status = stringField(entry, "status", "status_str")
  if (Option.isSome(status) && status.value === "error") {
    const messages = field(entry, "status", "messages")
    const detail = Array.isArray(messages)
      ? messages
        .filter((message): message is [string, unknown] => Array.isArray(message) && message[0] === "execution_error")
        .map(([, data]) => `${String(field(data, "node_type") ?? "node")}: ${String(field(data, "exception_message") ?? "failed")}`)
        .join("; ")
      : ""
    return { _tag: "Failed", detail: detail === "" ? "the job failed" : detail.slice(0, 500) }
  }
  const completed = field(entry, "status", "completed")
  const image = outputImage(entry)
  return completed === true || image !== undefined ? { _tag: "Done", image } : { _tag: "Running" }
}

/**
 * A ComfyUI server (`IMAGE_BACKEND=comfyui`) running the API-format workflow of
 * `COMFYUI_WORKFLOW`: input images go up through `POST /upload/image`, the filled workflow is
 * queued with `POST /prompt`, `GET /history/<id>` is polled until the job is done, and the
 * result is read through `GET /view`. Interrupted (timeout, /kill), the job is taken off the
 * queue. `IMAGE_API_KEY`, when set, is sent as a bearer token (for servers behind a proxy).
 */
const make = (settings: ImageSettings, workflow: ComfyWorkflowJson) =>
  Effect.gen(function*() {
    const client = withoutTracerPropagation(yield* HttpClient.HttpClient)
    const url = (path: string) => `${settings.baseUrl}${path}`
    const auth: Record<string, string> = Option.match(settings.apiKey, {
      onNone: () => ({}),
      onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
    })
    const request = (built: HttpClientRequest.HttpClientRequest) =>
      send(client, NAME, HttpClientRequest.setHeaders(built, auth)).pipe(Effect.flatMap((response) => expectOk(response, NAME)))
    const clientId = randomUUID()

    const upload = (bytes: Uint8Array, mimeType: string, filename: string) =>
      Effect.gen(function*() {
        const upload = withMultipart(HttpClientRequest.post(url("/upload/image")), [
          { name: "image", file: bytes, filename, contentType: mimeType },
          { name: "type", value: "input" },
          { name: "overwrite", value: "true" }
        ])
        const answer = yield* readJson(yield* request(upload), NAME)
        const name = stringField(answer, "name")
        if (Option.isNone(name)) return yield* new MediaBackendError({ backend: NAME, reason: "bad_response", detail: "/upload/image did not name the stored file" })
        const subfolder = Option.getOrElse(stringField(answer, "subfolder"), () => "")
        // LoadImage takes "subfolder/name" for files outside the input folder's root.
        return subfolder === "" ? name.value : `${subfolder}/${name.value}`
      })

    const queue = (filled: ComfyWorkflowJson) =>
      Effect.gen(function*() {
        const built = yield* HttpClientRequest.bodyJson(HttpClientRequest.post(url("/prompt")), { prompt: filled, client_id: clientId }).pipe(
          Effect.mapError(() => new MediaBackendError({ backend: NAME, reason: "bad_response", detail: "the workflow could not be encoded" }))
        )
        const answer = yield* readJson(yield* request(built), NAME)
        const id = stringField(answer, "prompt_id")
        if (Option.isNone(id)) return yield* new MediaBackendError({ backend: NAME, reason: "bad_response", detail: "/prompt did not return a prompt_id" })
        return id.value
      })

    const dequeue = (id: string) =>
      HttpClientRequest.bodyJson(HttpClientRequest.post(url("/queue")), { delete: [id] }).pipe(
        Effect.flatMap(request),
        Effect.timeout(Duration.seconds(2)),
        Effect.ignore
      )

    const awaitResult = (id: string): Effect.Effect<OutputImage, MediaBackendError> =>
      Effect.gen(function*() {
        while (true) {
          const history = yield* readJson(yield* request(HttpClientRequest.get(url(`/history/${encodeURIComponent(id)}`))), NAME)
          const state = jobState(field(history, id))
          if (state._tag === "Failed") return yield* new MediaBackendError({ backend: NAME, reason: "job_failed", detail: state.detail })
          if (state._tag === "Done") {
            if (state.image === undefined) return yield* new MediaBackendError({ backend: NAME, reason: "bad_response", detail: "the job finished without an output image (does the workflow end in SaveImage?)" })
            return state.image
          }
          yield* Effect.sleep(settings.pollInterval)
        }
      })

    const view = (image: OutputImage) =>
      Effect.gen(function*() {
        const query = new URLSearchParams({ filename: image.filename, subfolder: image.subfolder, type: image.type })
        const bytes = yield* readBytes(yield* request(HttpClientRequest.get(url(`/view?${query}`))), NAME, settings.maxResultBytes)
        const format = sniffImage(bytes)
        if (format === undefined) return yield* new MediaBackendError({ backend: NAME, reason: "wrong_media", detail: "/view did not return an image" })
        const generated: GeneratedImage = { bytes, format }
        return generated
      })

    const generate = (job: ImageJob): Effect.Effect<GeneratedImage, MediaBackendError> =>
      Effect.gen(function*() {
        const size = job.mode === "inpaint" || job.mode === "outpaint" ? { width: job.canvas.width, height: job.canvas.height } : diffusionSize(job.aspectRatio)
        const image = job.mode === "img2img"
          ? yield* upload(job.image.bytes, job.image.format.mimeType, `loopcord-${job.seed}.${job.image.format.extension}`)
          : job.mode === "txt2img" ? "" : yield* upload(job.canvas.image, "image/png", `loopcord-${job.seed}.png`)
        const mask = job.mode === "inpaint" || job.mode === "outpaint" ? yield* upload(job.canvas.mask, "image/png", `loopcord-${job.seed}-mask.png`) : ""
        const filled = fillWorkflow(workflow, {
          prompt: job.prompt,
          negative_prompt: job.negativePrompt ?? "",
          seed: job.seed,
          width: size.width,
          height: size.height,
          denoise: job.mode === "txt2img" ? 1 : job.denoise,
          image,
          mask
        })
        const id = yield* queue(filled)
        const output = yield* awaitResult(id).pipe(Effect.onInterrupt(() => dequeue(id)))
        return yield* view(output)
      })

    return ImageBackend.of({ name: NAME, capabilities: comfyCapabilities(workflow), generate })
  })

/** The ComfyUI backend from `ImageConfig` (a workflow is required there), over the given HttpClient. */
export const layer: Layer.Layer<ImageBackend, never, HttpClient.HttpClient | ImageConfig> = Layer.effect(
  ImageBackend,
  Effect.flatMap(ImageConfig, (settings) =>
    Option.match(settings.comfyWorkflow, {
      onNone: () => Effect.die(new Error("IMAGE_BACKEND=comfyui without COMFYUI_WORKFLOW (the configuration check refuses this)")),
      onSome: (workflow) => make(settings, workflow)
    }))
)
