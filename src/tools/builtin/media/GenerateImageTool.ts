import { Duration, Effect, Result, Option, Random, Schema } from "effect"
import { ImageConfig } from "../../../config/ImageConfig"
import { toolFailure, toolSuccess, type ToolResult } from "../../../domain/ToolResult"
import { inpaintCanvas, OUTPAINT_AMOUNT_DEFAULT, OUTPAINT_DIRECTIONS, type OutpaintDirection, outpaintCanvas } from "../../../media/image/editCanvas"
import { ASPECT_RATIOS, type AspectRatio, type ImageCapabilities, ImageBackend, type ImageJob, type ImageMode } from "../../../media/image/ImageBackend"
import { ImageLoader } from "../../../media/ImageLoader"
import { MediaBackendError } from "../../../media/MediaBackendError"
import { MediaLibrary } from "../../../media/MediaLibrary"
import { GuildImageTagsStore } from "../../../store/GuildImageTagsStore"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { deliverMedia } from "./deliverMedia"
import {
  GENERATE_IMAGE,
  generateImageSurface,
  IMG2IMG_DENOISE_DEFAULT,
  INPAINT_PRESETS,
  type InpaintPreset,
  PRESET_DENOISE
} from "./generateImageSchema"
import { progressNotice, tagsFor, withPositiveTags } from "./imageTags"

/** Characters of prompt sent on (backends cap theirs; a runaway model must not send megabytes). */
const MAX_PROMPT_CHARS = 4000

/** What execution accepts: every field optional but the prompt, checked against the backend at run time. */
const GenerateImageArgs = Schema.Struct({
  prompt: Schema.String,
  aspect_ratio: Schema.optional(Schema.String),
  media_id: Schema.optional(Schema.String),
  __original_media_id: Schema.optional(Schema.String),
  target_identity: Schema.optional(Schema.String),
  denoise: Schema.optional(Schema.Number),
  mask_prompt: Schema.optional(Schema.String),
  inpaint_preset: Schema.optional(Schema.String),
  outpaint: Schema.optional(Schema.String),
  outpaint_amount: Schema.optional(Schema.Number)
})
type GenerateImageArgs = typeof GenerateImageArgs.Type

const blank = (text: string | undefined) => text === undefined || text.trim() === ""

const MODE_LABEL: Readonly<Record<ImageMode, string>> = {
  txt2img: "text-to-image",
  img2img: "image-to-image",
  inpaint: "inpainting",
  outpaint: "outpainting"
}

/**
 * The mode a call asks for, checked against what the backend runs (assembly hides what it cannot
 * do; a stale or hand-written call still gets a clear refusal here).
 */
const chooseMode = (args: GenerateImageArgs, capabilities: ImageCapabilities): Result.Result<ImageMode, string> => {
  const hasImage = !blank(args.media_id)
  const wantsOutpaint = !blank(args.outpaint)
  const wantsInpaint = !blank(args.mask_prompt) || !blank(args.inpaint_preset)
  const refuse = (mode: ImageMode) => Result.fail(`This image backend cannot do ${MODE_LABEL[mode]}.`)
  if (!hasImage) {
    if (wantsOutpaint || wantsInpaint) return Result.fail("Inpainting and outpainting need media_id: the image to change.")
    return capabilities.textToImage ? Result.succeed("txt2img") : Result.fail("This image backend only changes existing images: pass media_id.")
  }
  if (wantsOutpaint) return capabilities.outpaint ? Result.succeed("outpaint") : refuse("outpaint")
  if (wantsInpaint) return capabilities.inpaint ? Result.succeed("inpaint") : refuse("inpaint")
  if (capabilities.imageToImage) return Result.succeed("img2img")
  if (capabilities.inpaint) return Result.succeed("inpaint")
  return refuse("img2img")
}

const clampDenoise = (value: number | undefined): number | undefined =>
  value === undefined || !Number.isFinite(value) ? undefined : Math.min(1, Math.max(0.05, value))

const isPreset = (value: string | undefined): value is InpaintPreset => (INPAINT_PRESETS as ReadonlyArray<string | undefined>).includes(value)
const isDirection = (value: string | undefined): value is OutpaintDirection => (OUTPAINT_DIRECTIONS as ReadonlyArray<string | undefined>).includes(value)
const isRatio = (value: string | undefined): value is AspectRatio => (ASPECT_RATIOS as ReadonlyArray<string | undefined>).includes(value)

/** The prompt a backend gets: the model's, with identity and painted-area guidance, then the tags. */
const composePrompt = (args: GenerateImageArgs, mode: ImageMode, positiveTags: string): string => {
  const parts = [args.prompt.trim().slice(0, MAX_PROMPT_CHARS)]
  if (mode === "img2img" && !blank(args.target_identity)) parts.push(`Keep ${args.target_identity?.trim() ?? ""} recognisable.`)
  if ((mode === "inpaint" || mode === "outpaint") && !blank(args.mask_prompt)) parts.push(`In the painted area: ${args.mask_prompt?.trim() ?? ""}.`)
  return withPositiveTags(parts.join(" "), positiveTags)
}

/**
 * `generate_image`: exists only when IMAGE_BACKEND is set; its schema is
 * pruned per turn to the backend's modes and the server's tags; the image is posted through the
 * turn's media outlet (a Discord attachment, a file under ./data/media) and gets a media_id.
 * Every failure — a bad mode, an unusable reference, the backend's 4xx/5xx, a job past
 * IMAGE_TIMEOUT_MS — is a failed tool result.
 */
export const generateImageTool: Effect.Effect<Tool | undefined, never, ImageBackend | ImageConfig | ImageLoader | MediaLibrary> = Effect.gen(function*() {
  const backend = yield* ImageBackend
  const settings = yield* ImageConfig
  const loader = yield* ImageLoader
  const library = yield* MediaLibrary
  const tagStore = yield* Effect.serviceOption(GuildImageTagsStore)
  const capabilities = backend.capabilities
  const negativeOf = (negative: string) => (capabilities.negativePrompt ? negative : "")
  const surfaceFor = (tags: { readonly positive: string; readonly negative: string }) =>
    generateImageSurface(capabilities, { positive: tags.positive, negative: negativeOf(tags.negative) })
  const initial = surfaceFor({ positive: settings.defaultPositiveTags, negative: settings.defaultNegativeTags })
  if (initial === null) {
    yield* Effect.logWarning(`generate_image is hidden: the ${backend.name} backend supports no mode (does COMFYUI_WORKFLOW contain %prompt%?)`)
    return undefined
  }

  const execute = (args: GenerateImageArgs) =>
    Effect.gen(function*(): Effect.fn.Return<ToolResult, never, ToolContext> {
      const context = yield* ToolContext
      if (blank(args.prompt)) return toolFailure("prompt must be a non-empty string", { message: "generate_image needs a prompt describing the image." })
      const mode = chooseMode(args, capabilities)
      if (Result.isFailure(mode)) return toolFailure(mode.failure)
      const shownId = args.__original_media_id ?? args.media_id
      const tags = yield* tagsFor(settings, tagStore, context.guildId)
      const ratio: AspectRatio = isRatio(args.aspect_ratio) ? args.aspect_ratio : "1:1"
      const base = {
        prompt: composePrompt(args, mode.success, tags.positive),
        negativePrompt: capabilities.negativePrompt && tags.negative !== "" ? tags.negative : undefined,
        aspectRatio: ratio,
        seed: yield* Random.nextIntBetween(0, 2 ** 31)
      }
      let job: ImageJob
      if (mode.success === "txt2img") {
        job = { ...base, mode: "txt2img" }
      } else {
        const source = yield* Effect.result(loader.load(args.media_id ?? "", { signal: context.abortSignal }))
        if (Result.isFailure(source)) {
          return toolFailure(`Could not use ${shownId ?? "the image"}: ${source.failure.message}`, source.failure.operatorDetail === undefined ? {} : { detail: source.failure.operatorDetail })
        }
        if (mode.success === "img2img") {
          job = { ...base, mode: "img2img", image: source.success, denoise: clampDenoise(args.denoise) ?? IMG2IMG_DENOISE_DEFAULT }
        } else {
          const canvas = mode.success === "inpaint"
            ? inpaintCanvas(source.success.bytes)
            : outpaintCanvas(source.success.bytes, isDirection(args.outpaint) ? args.outpaint : "all", args.outpaint_amount ?? OUTPAINT_AMOUNT_DEFAULT)
          if (Result.isFailure(canvas)) return toolFailure(canvas.failure)
          const preset = isPreset(args.inpaint_preset) ? PRESET_DENOISE[args.inpaint_preset] : undefined
          job = { ...base, mode: mode.success, canvas: canvas.success, denoise: clampDenoise(args.denoise) ?? preset ?? (mode.success === "outpaint" ? 1 : PRESET_DENOISE.balanced) }
        }
      }
      if (!context.suppressProgressNotices) {
        yield* context.progress(progressNotice({
          backend: backend.name,
          mode: mode.success === "txt2img" ? undefined : MODE_LABEL[mode.success],
          mediaId: shownId,
          tags,
          negativeActive: base.negativePrompt !== undefined,
          inGuild: context.guildId !== undefined
        }))
      }
      const timeoutMs = Duration.toMillis(settings.timeout)
      const generated = yield* Effect.result(backend.generate(job).pipe(
        Effect.timeoutOrElse({
          duration: settings.timeout,
          orElse: () =>
            Effect.fail(new MediaBackendError({ backend: backend.name, reason: "timeout", detail: `no image after ${timeoutMs / 1000}s (IMAGE_TIMEOUT_MS)` }))
        })
      ))
      if (Result.isFailure(generated)) {
        yield* Effect.logWarning(`generate_image failed: ${generated.failure.message}`)
        const failure = generated.failure.failureText("image")
        return toolFailure(failure, {
          message: `The image could not be generated: ${failure}. Tell the user; do not pretend an image was made.`,
          detail: generated.failure.message
        })
      }
      const image = generated.success
      const entry = yield* library.register({
        _tag: "Stored",
        bytes: image.bytes,
        mimeType: image.format.mimeType,
        filename: `image.${image.format.extension}`
      })
      const delivery = yield* deliverMedia(context, {
        kind: "image",
        bytes: image.bytes,
        filename: `${entry.id}.${image.format.extension}`,
        mimeType: image.format.mimeType,
        mediaId: entry.id
      })
      if (Result.isFailure(delivery)) {
        return toolFailure("the image was generated but could not be posted", {
          message: `The image was generated (media_id ${entry.id}) but could not be posted here.`,
          detail: delivery.failure.message
        })
      }
      return toolSuccess({
        status: "image_generated",
        media_id: entry.id,
        mode: MODE_LABEL[mode.success],
        backend: backend.name,
        ...(image.format.width === undefined ? {} : { width: image.format.width, height: image.format.height }),
        posted: Option.isSome(delivery.success),
        ...(Option.isSome(delivery.success) && delivery.success.value.savedTo !== undefined ? { saved_to: delivery.success.value.savedTo } : {}),
        ...(image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt })
      }, {
        imageMetadata: { imageUrls: [{ url: `media:${entry.id}`, mimeType: image.format.mimeType }], totalSent: 1, totalValidated: 1 }
      })
    })

  const tool = makeTool({
    name: GENERATE_IMAGE,
    description: initial.description,
    category: "utility",
    parameters: GenerateImageArgs,
    requiresFollowUp: true,
    execute,
    triggerPatterns: [/\b(draw|paint|generate|create|make|render)\b.{0,40}\b(image|picture|drawing|art|illustration|photo)\b/i, /\bimg2img|inpaint|outpaint\b/i]
  })
  const declared: Tool = { ...tool, parameters: initial.parameters }
  return {
    ...declared,
    // Per turn: the server's tags change the description (dynamic assembly).
    assembleForContext: (assembly) =>
      Effect.map(tagsFor(settings, tagStore, assembly.guildId), (tags) => {
        const surface = surfaceFor(tags)
        return surface === null ? null : { ...declared, description: surface.description, parameters: surface.parameters }
      })
  }
})
