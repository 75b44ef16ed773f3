import type { JsonSchemaObject } from "../../../domain/ToolDeclaration"
import { OUTPAINT_AMOUNT_DEFAULT, OUTPAINT_AMOUNT_MAX, OUTPAINT_AMOUNT_MIN, OUTPAINT_DIRECTIONS } from "../../../media/image/editCanvas"
import { ASPECT_RATIOS, type ImageCapabilities } from "../../../media/image/ImageBackend"

export const GENERATE_IMAGE = "generate_image"

export const INPAINT_PRESETS = ["subtle", "balanced", "replace"] as const
export type InpaintPreset = (typeof INPAINT_PRESETS)[number]
/** How much of the area is repainted when no `denoise` is given. */
export const PRESET_DENOISE: Readonly<Record<InpaintPreset, number>> = { subtle: 0.35, balanced: 0.6, replace: 1 }
export const IMG2IMG_DENOISE_DEFAULT = 0.6

/** The default tags in force for this turn (the server's, else the environment's). */
interface ActiveImageTags {
  readonly positive: string
  /** Only when the backend takes a negative prompt: else negative tags are never mentioned. */
  readonly negative: string
}

/** What the model is told about generate_image this turn. */
interface ImageToolSurface {
  readonly description: string
  readonly parameters: JsonSchemaObject
}

const referenceModes = (capabilities: ImageCapabilities): ReadonlyArray<string> => [
  ...(capabilities.imageToImage ? ["image-to-image"] : []),
  ...(capabilities.inpaint ? ["inpainting"] : []),
  ...(capabilities.outpaint ? ["outpainting"] : [])
]

/** "a", "a or b", "a, b or c". */
const either = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`

/**
 * generate_image for a backend's capabilities, a pure function snapshot-tested for
 * every combination: text-only is exactly `prompt` and `aspect_ratio`; image-to-image adds
 * `media_id`, `target_identity`, `denoise`; inpainting adds `mask_prompt` and `inpaint_preset`,
 * outpainting `mask_prompt`, `outpaint` and `outpaint_amount`; descriptions name only the modes
 * that exist; no mode at all hides the tool (`null`).
 */
export const generateImageSurface = (capabilities: ImageCapabilities, tags: ActiveImageTags): ImageToolSurface | null => {
  const modes = referenceModes(capabilities)
  if (!capabilities.textToImage && modes.length === 0) return null
  const edits = capabilities.inpaint || capabilities.outpaint
  const editModes = [...(capabilities.inpaint ? ["inpainting"] : []), ...(capabilities.outpaint ? ["outpainting"] : [])]
  const sizeNotes = [...(capabilities.inpaint ? ["inpainting keeps the source's size"] : []), ...(capabilities.outpaint ? ["outpainting enlarges it"] : [])]
  const properties: Record<string, unknown> = {
    prompt: {
      type: "string",
      description: "What the image shows: subject, setting, style, lighting, in a sentence or a list of visual tags." +
        (edits ? ` When ${either(editModes)}, describe the whole finished picture; mask_prompt says what goes into the painted area.` : "")
    },
    aspect_ratio: {
      type: "string",
      enum: [...ASPECT_RATIOS],
      description: edits ? `Shape of the image (default 1:1; ${sizeNotes.join(", ")}).` : "Shape of the image (default 1:1)."
    }
  }
  if (modes.length > 0) {
    properties["media_id"] = {
      type: "string",
      description: `The media_id of the image to start from (${either(modes)}), exactly as shown in an image line of the conversation.` +
        (capabilities.textToImage ? " Leave it out to create a new image." : "")
    }
  }
  if (capabilities.imageToImage) {
    properties["target_identity"] = {
      type: "string",
      description: "Image-to-image: who or what in the reference must stay recognisable (e.g. 'the girl with the red scarf')."
    }
  }
  const denoiseModes = [...(capabilities.imageToImage ? ["image-to-image"] : []), ...(edits ? ["the painted area"] : [])]
  if (denoiseModes.length > 0) {
    properties["denoise"] = {
      type: "number",
      minimum: 0,
      maximum: 1,
      description: `How much may change for ${either(denoiseModes)}: 0.1 barely, 1 completely` +
        (capabilities.imageToImage ? ` (image-to-image default ${IMG2IMG_DENOISE_DEFAULT})` : "") + "."
    }
  }
  if (edits) {
    properties["mask_prompt"] = {
      type: "string",
      description: `What to paint in ${either([...(capabilities.inpaint ? ["the transparent area of the PNG (inpainting)"] : []), ...(capabilities.outpaint ? ["the new border (outpainting)"] : [])])}.`
    }
  }
  if (capabilities.inpaint) {
    properties["inpaint_preset"] = {
      type: "string",
      enum: [...INPAINT_PRESETS],
      description: "Inpainting the transparent area of a PNG: how strongly it is repainted when denoise is not given " +
        `(subtle ${PRESET_DENOISE.subtle}, balanced ${PRESET_DENOISE.balanced}, replace ${PRESET_DENOISE.replace}).`
    }
  }
  if (capabilities.outpaint) {
    properties["outpaint"] = {
      type: "string",
      enum: [...OUTPAINT_DIRECTIONS],
      description: "Outpainting: extend the PNG in this direction (a bigger canvas) instead of changing what is there."
    }
    properties["outpaint_amount"] = {
      type: "integer",
      minimum: OUTPAINT_AMOUNT_MIN,
      maximum: OUTPAINT_AMOUNT_MAX,
      description: `Outpainting: pixels added on each extended side (default ${OUTPAINT_AMOUNT_DEFAULT}).`
    }
  }
  const start = capabilities.textToImage
    ? "Create an image and post it in the chat."
    : `Change an existing image (${either(modes)}) and post the result in the chat; media_id is required.`
  const reference = capabilities.textToImage && modes.length > 0 ? ` To change an image of the conversation instead, pass its media_id (${either(modes)}).` : ""
  const positive = tags.positive === "" ? "" : ` This server's default style tags are added to every prompt: "${tags.positive}".`
  const negative = tags.negative === "" ? "" : ` Default negative tags are applied: "${tags.negative}".`
  return {
    description: `${start}${reference}${positive}${negative} The result comes back with its own media_id.`,
    parameters: {
      type: "object",
      properties,
      required: capabilities.textToImage ? ["prompt"] : ["prompt", "media_id"]
    }
  }
}
