import * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Effect, Layer, Option, Redacted } from "effect"
import { ImageConfig, type ImageSettings } from "../../config/ImageConfig"
import { normalizeHost } from "../../fetch/AddressPolicy"
import { SafeHttp, type SafeHttpFailure } from "../../fetch/SafeHttp"
import { expectOk, readJson, send, stringField, withoutTracerPropagation } from "../backendHttp"
import { sniffImage } from "../imageFormat"
import { type MultipartField, withMultipart } from "../multipartBody"
import { MediaBackendError } from "../MediaBackendError"
import { type AspectRatio, diffusionSize, type GeneratedImage, ImageBackend, type ImageJob } from "./ImageBackend"

const NAME = "OpenAI Images"

/** gpt-image models always answer `b64_json` and refuse the `response_format` field. */
const isGptImage = (model: string) => /^gpt-image/i.test(model)

/** The `size` the model accepts for a ratio: its own fixed sizes, else `WxH` (LocalAI and others). */
export const openAiSize = (model: string, ratio: AspectRatio): string => {
  const landscape = ratio === "16:9" || ratio === "4:3" || ratio === "3:2"
  const portrait = ratio === "9:16" || ratio === "3:4" || ratio === "2:3"
  if (isGptImage(model)) return landscape ? "1536x1024" : portrait ? "1024x1536" : "1024x1024"
  if (/^dall-e-3/i.test(model)) return landscape ? "1792x1024" : portrait ? "1024x1792" : "1024x1024"
  if (/^dall-e-2/i.test(model)) return "1024x1024"
  const { height, width } = diffusionSize(ratio)
  return `${width}x${height}`
}

/** Why the image link of an answer could not be had, for the logs (the model reads the class). */
const linkFailure = (error: SafeHttpFailure): MediaBackendError => {
  switch (error._tag) {
    case "UrlPolicyError":
      return new MediaBackendError({ backend: NAME, reason: "blocked_link", detail: `the answer's image link was refused: ${error.message}` })
    case "ResponseSizeError":
      return new MediaBackendError({ backend: NAME, reason: "too_large", detail: error.message })
    case "SafeHttpError":
      return new MediaBackendError({ backend: NAME, reason: error.code === "TIMEOUT" ? "timeout" : "unreachable", detail: `downloading the image link failed: ${error.message}` })
  }
}

/**
 * The OpenAI Images API (`IMAGE_BACKEND=openai`; also LocalAI and other compatible servers):
 * `POST /images/generations` for text-to-image, `POST /images/edits` (multipart, the reference
 * image as `image`) for image-to-image; the answer's `b64_json`, or its `url` downloaded. That
 * link is the backend's word, not the operator's: it is fetched through safe_http (the fetch
 * address policy and its metadata floor, pinned DNS, the byte cap), private addresses allowed
 * only on the configured backend's own host, and an error answer's body is never read.
 */
const make = (settings: ImageSettings) =>
  Effect.gen(function*() {
    const client = withoutTracerPropagation(yield* HttpClient.HttpClient)
    const http = yield* SafeHttp
    const backendHost = URL.canParse(settings.baseUrl) ? normalizeHost(new URL(settings.baseUrl).hostname) : undefined
    const url = (path: string) => `${settings.baseUrl}${path}`
    const auth: Record<string, string> = Option.match(settings.apiKey, {
      onNone: () => ({}),
      onSome: (key) => ({ authorization: `Bearer ${Redacted.value(key)}` })
    })
    const responseFormat = isGptImage(settings.model) ? {} : { response_format: "b64_json" }

    const decodeAnswer = (answer: unknown) =>
      Effect.gen(function*() {
        const revised = stringField(answer, "data", 0, "revised_prompt")
        const b64 = stringField(answer, "data", 0, "b64_json")
        let bytes: Uint8Array
        if (Option.isSome(b64)) {
          bytes = new Uint8Array(Buffer.from(b64.value, "base64"))
        } else {
          const link = stringField(answer, "data", 0, "url")
          if (Option.isNone(link) || !/^https?:\/\//i.test(link.value)) {
            const apiError = stringField(answer, "error", "message")
            return yield* new MediaBackendError({
              backend: NAME,
              reason: "bad_response",
              detail: Option.isSome(apiError) ? apiError.value : "the answer has neither data[0].b64_json nor data[0].url"
            })
          }
          const download = yield* http.request({
            url: link.value,
            headers: { accept: "image/png,image/jpeg,image/gif,image/webp,image/*;q=0.8" },
            maxBytes: settings.maxResultBytes,
            readBody: (head) => head.status >= 200 && head.status < 300,
            ...(backendHost === undefined ? {} : { trustedHost: backendHost })
          }).pipe(Effect.mapError(linkFailure))
          if (download.status < 200 || download.status >= 300) {
            return yield* new MediaBackendError({ backend: NAME, reason: "http_status", status: download.status, detail: `the image link answered HTTP ${download.status}` })
          }
          bytes = download.body
        }
        const format = sniffImage(bytes)
        if (format === undefined) {
          return yield* new MediaBackendError({ backend: NAME, reason: "wrong_media", detail: "the answer is not an image (not PNG, JPEG, GIF or WebP)" })
        }
        const image: GeneratedImage = { bytes, format, ...(Option.isSome(revised) ? { revisedPrompt: revised.value } : {}) }
        return image
      })

    const generations = (job: ImageJob) =>
      HttpClientRequest.post(url("/images/generations")).pipe(
        HttpClientRequest.setHeaders(auth),
        HttpClientRequest.bodyJson({ model: settings.model, prompt: job.prompt, n: 1, size: openAiSize(settings.model, job.aspectRatio), ...responseFormat }),
        Effect.mapError(() => new MediaBackendError({ backend: NAME, reason: "bad_response", detail: "the request could not be encoded" }))
      )

    const edits = (job: Extract<ImageJob, { readonly mode: "img2img" }>) => {
      const fields: Array<MultipartField> = [
        { name: "model", value: settings.model },
        { name: "prompt", value: job.prompt },
        { name: "n", value: "1" },
        { name: "size", value: openAiSize(settings.model, job.aspectRatio) },
        ...("response_format" in responseFormat ? [{ name: "response_format", value: "b64_json" }] : []),
        { name: "image", file: job.image.bytes, filename: `reference.${job.image.format.extension}`, contentType: job.image.format.mimeType }
      ]
      return Effect.succeed(withMultipart(HttpClientRequest.setHeaders(HttpClientRequest.post(url("/images/edits")), auth), fields))
    }

    const generate = (job: ImageJob): Effect.Effect<GeneratedImage, MediaBackendError> =>
      Effect.gen(function*() {
        const request = yield* (job.mode === "txt2img"
          ? generations(job)
          : job.mode === "img2img"
          ? edits(job)
          : new MediaBackendError({ backend: NAME, reason: "unsupported", detail: `${job.mode} is not available with the OpenAI Images backend` }))
        const response = yield* send(client, NAME, request).pipe(Effect.flatMap((answer) => expectOk(answer, NAME)))
        return yield* decodeAnswer(yield* readJson(response, NAME))
      })

    return ImageBackend.of({
      name: NAME,
      capabilities: { textToImage: true, imageToImage: true, inpaint: false, outpaint: false, negativePrompt: false },
      generate
    })
  })

/** The OpenAI Images backend from `ImageConfig`, over the given HttpClient. */
export const layer: Layer.Layer<ImageBackend, never, HttpClient.HttpClient | ImageConfig | SafeHttp> = Layer.effect(
  ImageBackend,
  Effect.flatMap(ImageConfig, make)
)
