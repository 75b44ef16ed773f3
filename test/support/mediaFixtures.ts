import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

/** The committed media fixtures (see test/fixtures/media/generate.sh). */
export const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "media")

export const pixelPngPath = join(fixturesDir, "pixel.png")
export const voiceOggPath = join(fixturesDir, "voice.ogg")

/** A 4×3 RGB PNG. */
export const pixelPng = (): Uint8Array => new Uint8Array(readFileSync(pixelPngPath))
/** 1.5 s of 48 kHz mono Ogg Opus. */
export const voiceOgg = (): Uint8Array => new Uint8Array(readFileSync(voiceOggPath))
