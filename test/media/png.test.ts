import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { deflateSync } from "node:zlib"
import { inpaintCanvas, outpaintBorders, outpaintCanvas } from "../../src/media/image/editCanvas"
import { decodePng, encodePng } from "../../src/media/png"
import { pixelPng } from "../support/mediaFixtures"

const decoded = (bytes: Uint8Array) => {
  const image = decodePng(bytes)
  if (Result.isFailure(image)) throw new Error(image.failure)
  return image.success
}

const pixelAt = (image: ReturnType<typeof decoded>, x: number, y: number) => [...image.pixels.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 4)]

describe("PNG codec (masks and canvases)", () => {
  it("decodes the RGB fixture to RGBA and round-trips through the encoder", () => {
    const image = decoded(pixelPng())
    assert.strictEqual(image.width, 4)
    assert.strictEqual(image.height, 3)
    assert.deepStrictEqual(pixelAt(image, 0, 0), [255, 0, 0, 255])
    assert.deepStrictEqual(pixelAt(image, 2, 0), [0, 0, 255, 255])
    assert.deepStrictEqual(pixelAt(image, 1, 2), [128, 128, 128, 255])
    const again = decoded(encodePng(image))
    assert.deepStrictEqual([...again.pixels], [...image.pixels])
    const grey = decoded(encodePng({ width: 2, height: 1, pixels: new Uint8Array([0, 255]) }, 1))
    assert.deepStrictEqual([...grey.pixels], [0, 0, 0, 255, 255, 255, 255, 255])
  })

  it("undoes every row filter (Sub, Up, Average, Paeth) as written by a real encoder", () => {
    // One RGBA row per filter type over the same pixels: each must decode to the same row.
    const width = 3
    const row = [10, 20, 30, 255, 40, 50, 60, 255, 70, 80, 90, 128]
    const previous = row
    const filtered = (filter: number) =>
      row.map((value, x) => {
        const left = x >= 4 ? row[x - 4] ?? 0 : 0
        const up = previous[x] ?? 0
        const upLeft = x >= 4 ? previous[x - 4] ?? 0 : 0
        const p = left + up - upLeft
        const paeth = Math.abs(p - left) <= Math.abs(p - up) && Math.abs(p - left) <= Math.abs(p - upLeft) ? left : Math.abs(p - up) <= Math.abs(p - upLeft) ? up : upLeft
        const predicted = [0, left, up, (left + up) >> 1, paeth][filter] ?? 0
        return (value - predicted + 256) & 0xff
      })
    const raw = Buffer.from([0, ...row, ...[1, 2, 3, 4].flatMap((filter) => [filter, ...filtered(filter)])])
    const png = Buffer.from(encodePng({ width, height: 5, pixels: new Uint8Array(width * 5 * 4) }))
    // Swap the IDAT of an encoded 3×5 image for the hand-filtered one.
    const idatAt = png.indexOf("IDAT") - 4
    const compressed = deflateSync(raw)
    const header = png.subarray(0, idatAt)
    const chunkHead = Buffer.alloc(8)
    chunkHead.writeUInt32BE(compressed.length)
    chunkHead.write("IDAT", 4, "latin1")
    const withFilters = Buffer.concat([header, chunkHead, compressed, Buffer.alloc(4), png.subarray(png.indexOf("IEND") - 4)])
    const image = decoded(withFilters)
    for (let y = 0; y < 5; y++) assert.deepStrictEqual([...image.pixels.subarray(y * 12, y * 12 + 12)], row, `row ${y}`)
  })

  it("refuses what it cannot read with a reason", () => {
    assert.isTrue(Result.isFailure(decodePng(new Uint8Array([0xff, 0xd8, 0xff]))))
    assert.isTrue(Result.isFailure(decodePng(pixelPng().subarray(0, 40))))
  })
})

describe("edit canvases", () => {
  it("inpainting: transparent pixels are the mask; an opaque source is refused", () => {
    const pixels = new Uint8Array(2 * 2 * 4).fill(200)
    pixels[3 * 4 + 3] = 0
    const canvas = inpaintCanvas(encodePng({ width: 2, height: 2, pixels }))
    if (Result.isFailure(canvas)) throw new Error(canvas.failure)
    assert.deepStrictEqual([...decoded(canvas.success.mask).pixels].filter((_, index) => index % 4 === 0), [0, 0, 0, 255])
    const opaque = inpaintCanvas(pixelPng())
    assert.isTrue(Result.isFailure(opaque) && opaque.failure.includes("transparent"))
    const jpeg = inpaintCanvas(new Uint8Array([0xff, 0xd8, 0xff, 0xe0]))
    assert.isTrue(Result.isFailure(jpeg) && jpeg.failure.includes("PNG"))
  })

  it("outpainting: the source on a larger transparent canvas, the new border white in the mask", () => {
    assert.deepStrictEqual(outpaintBorders("horizontal", 100), { left: 96, right: 96, top: 0, bottom: 0 })
    assert.deepStrictEqual(outpaintBorders("up", 5000), { left: 0, right: 0, top: 1024, bottom: 0 })
    assert.deepStrictEqual(outpaintBorders("all", 1), { left: 64, right: 64, top: 64, bottom: 64 })
    const canvas = outpaintCanvas(pixelPng(), "right", 64)
    if (Result.isFailure(canvas)) throw new Error(canvas.failure)
    assert.strictEqual(canvas.success.width, 68)
    assert.strictEqual(canvas.success.height, 3)
    const image = decoded(canvas.success.image)
    assert.deepStrictEqual(pixelAt(image, 0, 0), [255, 0, 0, 255])
    assert.deepStrictEqual(pixelAt(image, 4, 0), [0, 0, 0, 0])
    const mask = decoded(canvas.success.mask)
    assert.deepStrictEqual([pixelAt(mask, 3, 1)[0], pixelAt(mask, 4, 1)[0]], [0, 255])
  })
})
