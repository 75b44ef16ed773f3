import { Effect, Result, Layer, Stream } from "effect"
import { seesImages, VisionConfig, type VisionSettings } from "../config/VisionConfig"
import { ChatMessage, type ImageRef } from "../domain/ChatMessage"
import type { ImageMetadata } from "../domain/ImageMetadata"
import { ToolHistoryEntry } from "../domain/ToolHistoryEntry"
import type { GenerationRequest } from "../provider/GenerationRequest"
import { LanguageModel } from "../provider/LanguageModel"
import { dataUrl } from "./imageFormat"
import { ImageLoader } from "./ImageLoader"
import { entryOf, locatorOf, type MediaLibraryShape, MediaLibrary } from "./MediaLibrary"

/** The tool a model without vision is pointed to. */
const ANALYZE_IMAGE = "analyze_image"

const hasImages = (request: GenerationRequest): boolean =>
  request.messages.some((message) => (message.images ?? []).length > 0) ||
  request.functionHistory.some((entry) => (entry.imageMetadata?.imageUrls ?? []).length > 0)

/** The line a model reads for an image it is not sent (it names the id, never the URL). */
const imagePlaceholder = (id: string, options: { readonly analyzable: boolean; readonly ownPost: boolean; readonly failure?: string }): string =>
  options.ownPost
    ? `[you posted image media_id=${id}]`
    : options.failure !== undefined
    ? `[image media_id=${id} could not be loaded: ${options.failure}]`
    : options.analyzable
    ? `[image media_id=${id}: not visible to you; call ${ANALYZE_IMAGE} with this media_id to see it]`
    : `[image media_id=${id}: not visible to you]`

/** The line beside an image a vision model is sent: the id lets it refer to the image in tool calls. */
const visibleImageLine = (id: string): string => `[image media_id=${id}]`

const withLines = (content: string, lines: ReadonlyArray<string>): string =>
  lines.length === 0 ? content : [content, ...lines].filter((part) => part.length > 0).join("\n")

/**
 * One request as `model` may see it: images of the conversation go inline (base64 data URLs,
 * downloaded through safe_http) only to models in `LLM_VISION_MODELS`, at most the newest
 * `maxImagesPerRequest`, each with its media_id line; every other image — on a text-only model (a
 * fallback too), past the budget, in an assistant message, or one that failed to load — is a
 * one-line placeholder with its media_id. Tool-result images (`imageMetadata`) are resolved for
 * vision models and dropped for the others, so no provider adds a carrier message for them.
 */
const prepareRequest = (
  request: GenerationRequest,
  settings: Pick<VisionSettings, "visionModels" | "maxImagesPerRequest" | "maxImageBytes">,
  library: MediaLibraryShape,
  loader: ImageLoader["Service"]
): Effect.Effect<GenerationRequest> =>
  Effect.gen(function*() {
    if (!hasImages(request)) return request
    const vision = seesImages(settings, request.model)
    const analyzable = request.tools.some((tool) => tool.name === ANALYZE_IMAGE)
    let budget = vision ? settings.maxImagesPerRequest : 0

    /** Inline data for a vision model, or why not. */
    const inline = (locator: string) =>
      Effect.map(Effect.result(loader.load(locator)), Result.map((image): ImageRef => ({ url: dataUrl(image.format.mimeType, image.bytes), mimeType: image.format.mimeType })))

    // Newest first, so the budget goes to the most recent images.
    const prepared: Array<ChatMessage> = []
    for (const message of [...request.messages].reverse()) {
      const images = message.images ?? []
      if (images.length === 0) {
        prepared.push(message)
        continue
      }
      const sent: Array<ImageRef> = []
      const lines: Array<string> = []
      for (const image of images) {
        const entry = yield* entryOf(library, image)
        if (message.role !== "user") {
          lines.push(imagePlaceholder(entry.id, { analyzable, ownPost: message.role === "assistant" }))
          continue
        }
        if (budget <= 0) {
          lines.push(imagePlaceholder(entry.id, { analyzable, ownPost: false }))
          continue
        }
        budget--
        if (image.sizeBytes !== undefined && image.sizeBytes > settings.maxImageBytes) {
          // The front knows the size: no download that would only hit the cap.
          lines.push(imagePlaceholder(entry.id, { analyzable, ownPost: false, failure: `larger than ${Math.round(settings.maxImageBytes / (1024 * 1024))} MB (VISION_MAX_IMAGE_MB)` }))
          continue
        }
        const loaded = yield* inline(locatorOf(entry))
        if (Result.isFailure(loaded)) {
          lines.push(imagePlaceholder(entry.id, { analyzable, ownPost: false, failure: loaded.failure.message }))
          continue
        }
        sent.push(loaded.success)
        lines.push(visibleImageLine(entry.id))
      }
      const { images: _dropped, ...rest } = message
      prepared.push(ChatMessage({ ...rest, content: withLines(message.content, lines), ...(sent.length === 0 ? {} : { images: sent }) }))
    }
    prepared.reverse()

    const history = yield* Effect.forEach(request.functionHistory, (entry) =>
      Effect.gen(function*() {
        const urls = entry.imageMetadata?.imageUrls ?? []
        if (urls.length === 0) return entry
        const { imageMetadata: _dropped, ...rest } = entry
        if (!vision) return ToolHistoryEntry(rest)
        const resolved = yield* Effect.forEach(urls, (image) => inline(image.url))
        const imageUrls = resolved.flatMap((image) => (Result.isSuccess(image) ? [image.success] : []))
        if (imageUrls.length === 0) return ToolHistoryEntry(rest)
        const metadata: ImageMetadata = { ...entry.imageMetadata, imageUrls, totalSent: imageUrls.length, totalValidated: imageUrls.length }
        return ToolHistoryEntry({ ...rest, imageMetadata: metadata })
      }))

    return { ...request, messages: prepared, functionHistory: history }
  })

/**
 * The LanguageModel every turn talks to, over the provider's: each request is prepared for the
 * model it names, so a primary model in `LLM_VISION_MODELS` sees the images and a text-only
 * fallback of the same turn never receives them.
 */
export const layer: Layer.Layer<LanguageModel, never, LanguageModel | VisionConfig | MediaLibrary | ImageLoader> = Layer.effect(
  LanguageModel,
  Effect.gen(function*() {
    const inner = yield* LanguageModel
    const settings = yield* VisionConfig
    const library = yield* MediaLibrary
    const loader = yield* ImageLoader
    return {
      name: inner.name,
      stream: (request: GenerationRequest) =>
        hasImages(request)
          ? Stream.unwrap(Effect.map(prepareRequest(request, settings, library, loader), inner.stream))
          : inner.stream(request)
    }
  })
)
