import { Result } from "effect"
import { decodePng, encodePng } from "../png"

/**
 * The inputs of an edit that changes part of a picture, as PNGs a backend uploads: the image
 * and a greyscale mask (white = paint here, black = keep).
 */
export interface EditCanvas {
  readonly image: Uint8Array
  readonly mask: Uint8Array
  readonly width: number
  readonly height: number
}

export const OUTPAINT_DIRECTIONS = ["left", "right", "up", "down", "horizontal", "vertical", "all"] as const
export type OutpaintDirection = (typeof OUTPAINT_DIRECTIONS)[number]

export const OUTPAINT_AMOUNT_DEFAULT = 256
export const OUTPAINT_AMOUNT_MIN = 64
export const OUTPAINT_AMOUNT_MAX = 1024

const pngOnly = (what: string) =>
  `${what} needs a PNG image (JPEG, GIF and WebP cannot be ${what === "Inpainting" ? "masked" : "extended"} here); ` +
  "generate or upload a PNG first"

/**
 * Inpainting: the transparent pixels of the source (alpha below half) are the area to repaint,
 * the way image editors "erase" what should change. A source without one is refused.
 */
export const inpaintCanvas = (png: Uint8Array): Result.Result<EditCanvas, string> =>
  Result.flatMap(Result.mapError(decodePng(png), () => pngOnly("Inpainting")), (image) => {
    const mask = new Uint8Array(image.width * image.height)
    let marked = 0
    for (let index = 0; index < mask.length; index++) {
      if ((image.pixels[index * 4 + 3] ?? 255) < 128) {
        mask[index] = 255
        marked++
      }
    }
    if (marked === 0) {
      return Result.fail("Inpainting needs the area to repaint marked as transparent in the PNG; this image has no transparent pixels")
    }
    return Result.succeed({ image: png, mask: encodePng({ width: image.width, height: image.height, pixels: mask }, 1), width: image.width, height: image.height })
  })

/** Border sizes of an outpaint, rounded down to multiples of 8 (latent-space friendly). */
export const outpaintBorders = (direction: OutpaintDirection, amount: number) => {
  const px = Math.floor(Math.min(OUTPAINT_AMOUNT_MAX, Math.max(OUTPAINT_AMOUNT_MIN, amount)) / 8) * 8
  const on = (...sides: ReadonlyArray<OutpaintDirection>) => (sides.includes(direction) ? px : 0)
  return {
    left: on("left", "horizontal", "all"),
    right: on("right", "horizontal", "all"),
    top: on("up", "vertical", "all"),
    bottom: on("down", "vertical", "all")
  }
}

/** Outpainting: the source on a larger transparent canvas; the mask is the new border. */
export const outpaintCanvas = (png: Uint8Array, direction: OutpaintDirection, amount: number): Result.Result<EditCanvas, string> =>
  Result.map(Result.mapError(decodePng(png), () => pngOnly("Outpainting")), (source) => {
    const border = outpaintBorders(direction, amount)
    const width = source.width + border.left + border.right
    const height = source.height + border.top + border.bottom
    const pixels = new Uint8Array(width * height * 4)
    const mask = new Uint8Array(width * height).fill(255)
    for (let y = 0; y < source.height; y++) {
      const row = (y + border.top) * width + border.left
      pixels.set(source.pixels.subarray(y * source.width * 4, (y + 1) * source.width * 4), row * 4)
      mask.fill(0, row, row + source.width)
    }
    return { image: encodePng({ width, height, pixels }), mask: encodePng({ width, height, pixels: mask }, 1), width, height }
  })
