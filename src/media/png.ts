import { Result } from "effect"
import { deflateSync, inflateSync } from "node:zlib"

/**
 * Just enough PNG for masks and canvases: decode 8-bit, non-interlaced PNGs of every colour
 * type to RGBA, and encode RGBA or greyscale. Inpainting reads a source's transparency as the
 * area to repaint; outpainting pads a canvas with a transparent border.
 */

interface RgbaImage {
  readonly width: number
  readonly height: number
  /** width × height × 4 bytes, row by row. */
  readonly pixels: Uint8Array
}

/** Larger images are refused before inflating (40 megapixels ≈ 160 MB of RGBA). */
const MAX_PNG_PIXELS = 40_000_000

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

const crc32 = (bytes: Uint8Array): number => {
  let c = 0xffffffff
  for (const byte of bytes) c = (CRC_TABLE[(c ^ byte) & 0xff] ?? 0) ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

const CHANNELS: Readonly<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** RGBA pixels of a PNG, or why it cannot be read here. */
export const decodePng = (bytes: Uint8Array): Result.Result<RgbaImage, string> => {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (data.length < 8 || !data.subarray(0, 8).equals(SIGNATURE)) return Result.fail("not a PNG")
  let width = 0
  let height = 0
  let colorType = -1
  let palette: Buffer | undefined
  let transparency: Buffer | undefined
  const idat: Array<Buffer> = []
  for (let offset = 8; offset + 12 <= data.length;) {
    const length = data.readUInt32BE(offset)
    const type = data.toString("latin1", offset + 4, offset + 8)
    const body = data.subarray(offset + 8, offset + 8 + length)
    if (body.length !== length) return Result.fail("truncated PNG chunk")
    if (type === "IHDR") {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      const depth = body[8]
      colorType = body[9] ?? -1
      if (depth !== 8) return Result.fail(`PNG bit depth ${depth ?? "?"} is not supported (8 only)`)
      if (body[12] !== 0) return Result.fail("interlaced PNGs are not supported")
      if (CHANNELS[colorType] === undefined) return Result.fail(`PNG colour type ${colorType} is not supported`)
      if (width === 0 || height === 0 || width * height > MAX_PNG_PIXELS) return Result.fail(`PNG size ${width}×${height} is out of range`)
    } else if (type === "PLTE") palette = body
    else if (type === "tRNS") transparency = body
    else if (type === "IDAT") idat.push(body)
    else if (type === "IEND") break
    offset += 12 + length
  }
  if (colorType < 0) return Result.fail("PNG without IHDR")
  if (colorType === 3 && palette === undefined) return Result.fail("palette PNG without PLTE")
  const channels = CHANNELS[colorType] ?? 1
  const stride = width * channels
  let raw: Buffer
  try {
    raw = inflateSync(Buffer.concat(idat), { maxOutputLength: (stride + 1) * height })
  } catch {
    return Result.fail("the PNG image data does not inflate")
  }
  if (raw.length < (stride + 1) * height) return Result.fail("the PNG image data is short")
  const rows = new Uint8Array(stride * height)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const source = y * (stride + 1) + 1
    const target = y * stride
    if (filter === undefined || filter > 4) return Result.fail(`unknown PNG filter ${filter ?? "?"}`)
    for (let x = 0; x < stride; x++) {
      const value = raw[source + x] ?? 0
      const left = x >= channels ? rows[target + x - channels] ?? 0 : 0
      const up = y > 0 ? rows[target - stride + x] ?? 0 : 0
      const upLeft = y > 0 && x >= channels ? rows[target - stride + x - channels] ?? 0 : 0
      const predicted = filter === 1 ? left : filter === 2 ? up : filter === 3 ? (left + up) >> 1 : filter === 4 ? paeth(left, up, upLeft) : 0
      rows[target + x] = (value + predicted) & 0xff
    }
  }
  const pixels = new Uint8Array(width * height * 4)
  for (let index = 0; index < width * height; index++) {
    const at = index * channels
    const out = index * 4
    const a = rows[at] ?? 0
    if (colorType === 0) pixels.set([a, a, a, 255], out)
    else if (colorType === 4) pixels.set([a, a, a, rows[at + 1] ?? 255], out)
    else if (colorType === 2) pixels.set([a, rows[at + 1] ?? 0, rows[at + 2] ?? 0, 255], out)
    else if (colorType === 6) pixels.set([a, rows[at + 1] ?? 0, rows[at + 2] ?? 0, rows[at + 3] ?? 255], out)
    else {
      const entry = (palette ?? Buffer.alloc(0)).subarray(a * 3, a * 3 + 3)
      pixels.set([entry[0] ?? 0, entry[1] ?? 0, entry[2] ?? 0, transparency?.[a] ?? 255], out)
    }
  }
  return Result.succeed({ width, height, pixels })
}

const chunk = (type: string, body: Uint8Array): Buffer => {
  const head = Buffer.alloc(8)
  head.writeUInt32BE(body.length, 0)
  head.write(type, 4, "latin1")
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), body])))
  return Buffer.concat([head, body, crc])
}

/** A PNG of `pixels`: 4 channels (RGBA) or 1 (greyscale). */
export const encodePng = (image: { readonly width: number; readonly height: number; readonly pixels: Uint8Array }, channels: 1 | 4 = 4): Uint8Array => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(image.width, 0)
  header.writeUInt32BE(image.height, 4)
  header[8] = 8
  header[9] = channels === 4 ? 6 : 0
  const stride = image.width * channels
  const raw = Buffer.alloc((stride + 1) * image.height)
  for (let y = 0; y < image.height; y++) {
    raw[y * (stride + 1)] = 0
    raw.set(image.pixels.subarray(y * stride, (y + 1) * stride), y * (stride + 1) + 1)
  }
  return new Uint8Array(Buffer.concat([SIGNATURE, chunk("IHDR", header), chunk("IDAT", deflateSync(raw)), chunk("IEND", new Uint8Array(0))]))
}
