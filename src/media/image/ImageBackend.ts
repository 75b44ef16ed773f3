import { Context, type Effect } from "effect"
import type { ImageFormat } from "../imageFormat"
import type { LoadedImage } from "../ImageLoader"
import type { MediaBackendError } from "../MediaBackendError"
import type { EditCanvas } from "./editCanvas"

/** What a configured image backend can run; generate_image's schema offers exactly that. */
export interface ImageCapabilities {
  readonly textToImage: boolean
  readonly imageToImage: boolean
  readonly inpaint: boolean
  readonly outpaint: boolean
  /** A negative prompt reaches the model (only then are default negative tags passed). */
  readonly negativePrompt: boolean
}

export const ASPECT_RATIOS = ["1:1", "16:9", "9:16", "4:3", "3:4", "3:2", "2:3"] as const
export type AspectRatio = (typeof ASPECT_RATIOS)[number]

interface JobBase {
  readonly prompt: string
  /** Only set when the backend supports negative prompts. */
  readonly negativePrompt: string | undefined
  readonly aspectRatio: AspectRatio
  readonly seed: number
}

/** One generation, by mode. */
export type ImageJob =
  | (JobBase & { readonly mode: "txt2img" })
  | (JobBase & { readonly mode: "img2img"; readonly image: LoadedImage; readonly denoise: number })
  | (JobBase & { readonly mode: "inpaint" | "outpaint"; readonly canvas: EditCanvas; readonly denoise: number })

export type ImageMode = ImageJob["mode"]

export interface GeneratedImage {
  readonly bytes: Uint8Array
  readonly format: ImageFormat
  /** The prompt as the backend rewrote it (OpenAI `revised_prompt`), when it says. */
  readonly revisedPrompt?: string
}

/**
 * An image backend (`IMAGE_BACKEND`): a real protocol client, one Layer each (OpenAI Images,
 * ComfyUI). Interrupting `generate` aborts its requests.
 */
export class ImageBackend extends Context.Service<ImageBackend, {
  /** Shown in notices and logs ("OpenAI Images", "ComfyUI"). */
  readonly name: string
  readonly capabilities: ImageCapabilities
  readonly generate: (job: ImageJob) => Effect.Effect<GeneratedImage, MediaBackendError>
}>()("loopcord/media/ImageBackend") {}

/** Pixel size of an aspect ratio at about one megapixel, multiples of 64 (SD/SDXL buckets). */
export const diffusionSize = (ratio: AspectRatio): { readonly width: number; readonly height: number } => {
  switch (ratio) {
    case "1:1":
      return { width: 1024, height: 1024 }
    case "16:9":
      return { width: 1344, height: 768 }
    case "9:16":
      return { width: 768, height: 1344 }
    case "4:3":
      return { width: 1152, height: 896 }
    case "3:4":
      return { width: 896, height: 1152 }
    case "3:2":
      return { width: 1216, height: 832 }
    case "2:3":
      return { width: 832, height: 1216 }
  }
}
