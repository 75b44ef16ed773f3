import type { ComfyWorkflowJson } from "../../config/ImageConfig"
import type { ImageCapabilities } from "./ImageBackend"

/** The placeholders a ComfyUI workflow marks its inputs with. */
const COMFY_PLACEHOLDERS = ["prompt", "negative_prompt", "seed", "width", "height", "denoise", "image", "mask"] as const
type ComfyPlaceholder = (typeof COMFY_PLACEHOLDERS)[number]

/** Placeholders whose whole-string use becomes a number (KSampler seed, latent size, denoise). */
const NUMERIC: ReadonlySet<ComfyPlaceholder> = new Set(["seed", "width", "height", "denoise"])

const PATTERN = /%(prompt|negative_prompt|seed|width|height|denoise|image|mask)%/g
const WHOLE = /^%(prompt|negative_prompt|seed|width|height|denoise|image|mask)%$/

/** Deep enough for any real workflow (node → inputs → value); deeper values are left alone. */
const MAX_DEPTH = 16

const walkStrings = (value: unknown, visit: (text: string) => void, depth = 0): void => {
  if (depth > MAX_DEPTH) return
  if (typeof value === "string") visit(value)
  else if (Array.isArray(value)) for (const item of value) walkStrings(item, visit, depth + 1)
  else if (typeof value === "object" && value !== null) for (const item of Object.values(value)) walkStrings(item, visit, depth + 1)
}

/** Every placeholder the workflow uses. */
export const placeholdersIn = (workflow: ComfyWorkflowJson): ReadonlySet<ComfyPlaceholder> => {
  const found = new Set<ComfyPlaceholder>()
  walkStrings(workflow, (text) => {
    for (const match of text.matchAll(PATTERN)) found.add(match[1] as ComfyPlaceholder)
  })
  return found
}

/**
 * A mode is supported exactly when its placeholders are present: `%prompt%` alone is
 * text-to-image; with `%image%` image-to-image (the workflow loads a picture, so it cannot run
 * without one); with `%image%` and `%mask%` inpainting, and outpainting with it (the reference
 * rule: outpaint follows inpaint). `%negative_prompt%` makes negative tags reach the model.
 */
export const comfyCapabilities = (workflow: ComfyWorkflowJson): ImageCapabilities => {
  const used = placeholdersIn(workflow)
  const prompt = used.has("prompt")
  const image = used.has("image")
  const mask = used.has("mask")
  return {
    textToImage: prompt && !image && !mask,
    imageToImage: prompt && image && !mask,
    inpaint: prompt && image && mask,
    outpaint: prompt && image && mask,
    negativePrompt: used.has("negative_prompt")
  }
}

type ComfyValues = Readonly<Record<ComfyPlaceholder, string | number>>

/**
 * The workflow with its placeholders filled: a string that is exactly a numeric placeholder
 * becomes the number (`"%seed%"` ⇒ `123`), other occurrences are replaced inside their text.
 */
export const fillWorkflow = (workflow: ComfyWorkflowJson, values: ComfyValues): ComfyWorkflowJson => {
  const fill = (value: unknown, depth: number): unknown => {
    if (depth > MAX_DEPTH) return value
    if (typeof value === "string") {
      const whole = WHOLE.exec(value)
      if (whole !== null && NUMERIC.has(whole[1] as ComfyPlaceholder)) return values[whole[1] as ComfyPlaceholder]
      return value.replace(PATTERN, (_match, name: ComfyPlaceholder) => String(values[name]))
    }
    if (Array.isArray(value)) return value.map((item) => fill(item, depth + 1))
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item, depth + 1)]))
    }
    return value
  }
  return fill(workflow, 0) as ComfyWorkflowJson
}
