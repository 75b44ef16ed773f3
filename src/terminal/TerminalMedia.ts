import { mkdir, readFile, stat, writeFile } from "node:fs/promises"
import { basename, join, relative } from "node:path"
import { Data, Effect } from "effect"
import type { ImageRef } from "../domain/ChatMessage"
import { sniffImage } from "../media/imageFormat"
import { locatorOf, type MediaLibraryShape } from "../media/MediaLibrary"
import { type MediaOutlet, MediaDeliveryError } from "../tools/MediaOutlet"

/** An image file given with `--image` or `/attach` cannot be used. */
class AttachmentError extends Data.TaggedError("AttachmentError")<{ readonly path: string; readonly detail: string }> {
  override get message(): string {
    return `cannot attach ${this.path}: ${this.detail}`
  }
}

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error && error.code === "ENOENT"
    ? "no such file"
    : error instanceof Error ? error.message : String(error)

/**
 * Reads an image file for the conversation: at most `maxBytes` (VISION_MAX_IMAGE_MB), really a
 * PNG, JPEG, GIF or WebP; its bytes go into the media library and the message refers to them by
 * id (`media:<id>`), like any other image.
 */
export const attachImageFile = (library: MediaLibraryShape, path: string, maxBytes: number) =>
  Effect.gen(function*() {
    const info = yield* Effect.tryPromise({ try: () => stat(path), catch: (error) => new AttachmentError({ path, detail: describe(error) }) })
    if (!info.isFile()) return yield* new AttachmentError({ path, detail: "not a file" })
    if (info.size > maxBytes) {
      return yield* new AttachmentError({ path, detail: `larger than ${Math.round(maxBytes / (1024 * 1024))} MB (VISION_MAX_IMAGE_MB)` })
    }
    const bytes = new Uint8Array(yield* Effect.tryPromise({ try: () => readFile(path), catch: (error) => new AttachmentError({ path, detail: describe(error) }) }))
    const format = sniffImage(bytes)
    if (format === undefined) return yield* new AttachmentError({ path, detail: "not an image (PNG, JPEG, GIF or WebP)" })
    const entry = yield* library.register({ _tag: "Stored", bytes, mimeType: format.mimeType, filename: basename(path), path })
    const image: ImageRef = { url: locatorOf(entry), mimeType: format.mimeType }
    return { id: entry.id, image }
  })

/**
 * The terminal's media outlet: each file is written under `dir` (created on first use) and its
 * path announced; the path goes back to the tool (and so into the `--json` report).
 */
export const fileMediaOutlet = (dir: string, announce: (line: string) => Effect.Effect<void>): MediaOutlet => ({
  deliver: (media) =>
    Effect.gen(function*() {
      const name = media.filename.startsWith(media.mediaId) ? media.filename : `${media.mediaId}-${media.filename}`
      const path = join(dir, name.replace(/[^A-Za-z0-9._-]/g, "_"))
      yield* Effect.tryPromise({
        try: async () => {
          await mkdir(dir, { recursive: true })
          await writeFile(path, media.bytes)
        },
        catch: (error) => new MediaDeliveryError({ detail: `could not save ${path}: ${describe(error)}` })
      })
      const shown = relative(process.cwd(), path) || path
      const savedTo = shown.startsWith("..") ? path : shown
      yield* announce(`${media.kind === "voice" ? "🔊 voice message" : "🖼 image"} saved to ${savedTo}`)
      return { savedTo }
    })
})
