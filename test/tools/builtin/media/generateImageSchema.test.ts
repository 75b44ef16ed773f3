import { assert, describe, expect, it } from "@effect/vitest"
import type { ImageCapabilities } from "../../../../src/media/image/ImageBackend"
import { generateImageSurface } from "../../../../src/tools/builtin/media/generateImageSchema"

const MODES = ["textToImage", "imageToImage", "inpaint", "outpaint"] as const

/** Every combination of the four modes (16). */
const combinations: ReadonlyArray<ImageCapabilities> = Array.from({ length: 16 }, (_, bits) => ({
  textToImage: (bits & 1) !== 0,
  imageToImage: (bits & 2) !== 0,
  inpaint: (bits & 4) !== 0,
  outpaint: (bits & 8) !== 0,
  negativePrompt: false
}))

const label = (capabilities: ImageCapabilities) => MODES.filter((mode) => capabilities[mode]).join("+") || "none"
const noTags = { positive: "", negative: "" }

describe("generate_image schema pruning (spec §6.4, a pure function of the backend's capabilities)", () => {
  for (const capabilities of combinations) {
    it(`snapshot: ${label(capabilities)}`, () => {
      expect(generateImageSurface(capabilities, noTags)).toMatchSnapshot()
    })
  }

  it("[80] the reference property sets: text-only exactly prompt+aspect_ratio; img2img adds media_id, target_identity, denoise; inpaint/outpaint add their four", () => {
    const keys = (capabilities: Partial<ImageCapabilities>) =>
      Object.keys(generateImageSurface({ textToImage: false, imageToImage: false, inpaint: false, outpaint: false, negativePrompt: false, ...capabilities }, noTags)?.parameters.properties ?? {})
    assert.deepStrictEqual(keys({ textToImage: true }), ["prompt", "aspect_ratio"])
    assert.deepStrictEqual(keys({ textToImage: true, imageToImage: true }), ["prompt", "aspect_ratio", "media_id", "target_identity", "denoise"])
    assert.deepStrictEqual(keys({ inpaint: true, outpaint: true }), ["prompt", "aspect_ratio", "media_id", "denoise", "mask_prompt", "inpaint_preset", "outpaint", "outpaint_amount"])
    assert.deepStrictEqual(keys({ textToImage: true, imageToImage: true, inpaint: true, outpaint: true }), [
      "prompt", "aspect_ratio", "media_id", "target_identity", "denoise", "mask_prompt", "inpaint_preset", "outpaint", "outpaint_amount"
    ])
    assert.isNull(generateImageSurface(combinations[0] as ImageCapabilities, noTags), "no mode: the tool is hidden")
  })

  it("[80] descriptions name only the modes that exist; a text-only backend sees no edit wording", () => {
    const textOnly = JSON.stringify(generateImageSurface({ ...(combinations[1] as ImageCapabilities) }, noTags))
    for (const word of ["inpaint", "outpaint", "mask", "media_id of the image", "denoise", "image-to-image"]) assert.notInclude(textOnly, word)
    const img2img = generateImageSurface({ ...(combinations[3] as ImageCapabilities) }, noTags)
    const mediaId = (img2img?.parameters.properties["media_id"] as { description: string }).description
    assert.include(mediaId, "(image-to-image)")
    assert.notInclude(mediaId, "inpaint")
    const editOnly = generateImageSurface({ ...(combinations[12] as ImageCapabilities) }, noTags)
    assert.deepStrictEqual(editOnly?.parameters.required, ["prompt", "media_id"])
    assert.include(editOnly?.description ?? "", "media_id is required")
  })

  it("tags: positive tags are guidance in the description; negative tags only when given (the backend takes them)", () => {
    const both = generateImageSurface(combinations[1] as ImageCapabilities, { positive: "watercolor", negative: "blurry" })
    assert.include(both?.description ?? "", `default style tags are added to every prompt: "watercolor"`)
    assert.include(both?.description ?? "", `Default negative tags are applied: "blurry"`)
    const positiveOnly = generateImageSurface(combinations[1] as ImageCapabilities, { positive: "watercolor", negative: "" })
    assert.notInclude(positiveOnly?.description ?? "", "negative")
  })
})
