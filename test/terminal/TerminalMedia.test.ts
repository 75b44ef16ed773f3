import { assert, describe, it } from "@effect/vitest"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option, Ref } from "effect"
import { MediaLibrary, storedIdOf } from "../../src/media/MediaLibrary"
import { attachImageFile, fileMediaOutlet } from "../../src/terminal/TerminalMedia"
import { pixelPng, pixelPngPath } from "../support/mediaFixtures"

const tempDir = Effect.acquireRelease(
  Effect.sync(() => mkdtempSync(join(tmpdir(), "loopcord-terminal-"))),
  (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
)

describe("terminal media", () => {
  it.effect("--image / /attach: an image file goes into the library and the message refers to it by id; other files are refused", () =>
    Effect.gen(function*() {
      const library = yield* MediaLibrary
      const dir = yield* tempDir
      const attached = yield* attachImageFile(library, pixelPngPath, 1024 * 1024)
      assert.match(attached.id, /^img_/)
      assert.strictEqual(attached.image.url, `media:${attached.id}`)
      assert.strictEqual(attached.image.mimeType, "image/png")
      const entry = yield* library.lookup(storedIdOf(attached.image.url) ?? "")
      assert.isTrue(Option.isSome(entry) && entry.value.source._tag === "Stored" && entry.value.source.path === pixelPngPath)
      const text = join(dir, "notes.png")
      writeFileSync(text, "just text")
      assert.include((yield* Effect.flip(attachImageFile(library, text, 1024))).message, "not an image")
      assert.include((yield* Effect.flip(attachImageFile(library, pixelPngPath, 10))).message, "VISION_MAX_IMAGE_MB")
      assert.include((yield* Effect.flip(attachImageFile(library, join(dir, "missing.png"), 1024))).message, "no such file")
      assert.include((yield* Effect.flip(attachImageFile(library, dir, 1024))).message, "not a file")
    }).pipe(Effect.provide(MediaLibrary.Default)))

  it.effect("generated media are written under the directory (created on first use) and their paths announced", () =>
    Effect.gen(function*() {
      const dir = join(yield* tempDir, "nested", "media")
      const lines = yield* Ref.make<ReadonlyArray<string>>([])
      const outlet = fileMediaOutlet(dir, (line) => Ref.update(lines, (all) => [...all, line]))
      const image = yield* outlet.deliver({ kind: "image", bytes: pixelPng(), filename: "img_abcdefgh.png", mimeType: "image/png", mediaId: "img_abcdefgh" })
      const voice = yield* outlet.deliver({ kind: "voice", bytes: new Uint8Array([1, 2]), filename: "hello there.ogg", mimeType: "audio/ogg", mediaId: "aud_abcdefgh", voice: { durationSecs: 1, waveform: "" } })
      assert.strictEqual(image.savedTo, join(dir, "img_abcdefgh.png"))
      assert.strictEqual(voice.savedTo, join(dir, "aud_abcdefgh-hello_there.ogg"))
      assert.deepStrictEqual([...readFileSync(image.savedTo ?? "")], [...pixelPng()])
      assert.deepStrictEqual(yield* Ref.get(lines), [`🖼 image saved to ${image.savedTo}`, `🔊 voice message saved to ${voice.savedTo}`])
      const blocked = fileMediaOutlet(join(pixelPngPath, "sub"), () => Effect.void)
      assert.include((yield* Effect.flip(blocked.deliver({ kind: "image", bytes: pixelPng(), filename: "x.png", mimeType: "image/png", mediaId: "img_x" }))).detail, "could not save")
    }))
})
