/**
 * What an image really is, from its first bytes (never from a Content-Type header or a file
 * name, which anyone can get wrong): PNG, JPEG, GIF or WebP, with the pixel size when the
 * header states it. Anything else is not an image loopcord sends to a model.
 */

type ImageMimeType = "image/png" | "image/jpeg" | "image/gif" | "image/webp"

export interface ImageFormat {
  readonly mimeType: ImageMimeType
  readonly extension: "png" | "jpg" | "gif" | "webp"
  /** Pixel size, when the header carries it. */
  readonly width?: number
  readonly height?: number
}

const startsWith = (bytes: Uint8Array, signature: ReadonlyArray<number>, offset = 0): boolean =>
  bytes.length >= offset + signature.length && signature.every((byte, index) => bytes[offset + index] === byte)

const ascii = (text: string): ReadonlyArray<number> => [...text].map((character) => character.charCodeAt(0))

const view = (bytes: Uint8Array) => new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]

/** The image format of `bytes`, or undefined when they are not one of the four. */
export const sniffImage = (bytes: Uint8Array): ImageFormat | undefined => {
  if (startsWith(bytes, PNG)) {
    // IHDR is the first chunk: width and height are big-endian at offsets 16 and 20.
    const sized = bytes.length >= 24 && startsWith(bytes, ascii("IHDR"), 12)
    return {
      mimeType: "image/png",
      extension: "png",
      ...(sized ? { width: view(bytes).getUint32(16), height: view(bytes).getUint32(20) } : {})
    }
  }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { mimeType: "image/jpeg", extension: "jpg" }
  if (startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a"))) {
    const sized = bytes.length >= 10
    return {
      mimeType: "image/gif",
      extension: "gif",
      ...(sized ? { width: view(bytes).getUint16(6, true), height: view(bytes).getUint16(8, true) } : {})
    }
  }
  if (startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)) return { mimeType: "image/webp", extension: "webp" }
  return undefined
}

/** `data:<mime>;base64,<bytes>`: how an image travels inline to a model. */
export const dataUrl = (mimeType: string, bytes: Uint8Array): string =>
  `data:${mimeType};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")}`
