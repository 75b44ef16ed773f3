import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { looksLikeOgg, readOggOpus, WAVEFORM_SAMPLES, waveformOf } from "../../src/media/oggOpus"
import { voiceOgg } from "../support/mediaFixtures"

const info = (bytes: Uint8Array) => {
  const read = readOggOpus(bytes)
  if (Result.isFailure(read)) throw new Error(read.failure)
  return read.success
}

describe("Ogg Opus reading (voice messages)", () => {
  it("the fixture: 1.5 s (last granule minus pre-skip, at 48 kHz), mono, a waveform of at most 256 bytes", () => {
    const clip = info(voiceOgg())
    assert.closeTo(clip.durationSecs, 1.5, 0.001)
    assert.strictEqual(clip.channels, 1)
    // 20 ms frames covering 1.5 s plus the encoder's 312-sample pre-skip: 76 audio packets.
    assert.strictEqual(clip.packets, 76)
    const samples = Buffer.from(clip.waveform, "base64")
    assert.strictEqual(samples.length, 76)
    assert.isAtMost(samples.length, WAVEFORM_SAMPLES)
    assert.strictEqual(Math.max(...samples), 255)
    assert.strictEqual(Math.min(...samples), 0)
  })

  it("the pre-skip is subtracted: the same stream with a larger pre-skip is shorter", () => {
    const bytes = new Uint8Array(voiceOgg())
    // OpusHead is the first packet of the first page (27-byte header + 1 lacing byte); pre-skip at +10.
    const head = 28
    assert.strictEqual(String.fromCharCode(...bytes.subarray(head, head + 8)), "OpusHead")
    const view = new DataView(bytes.buffer)
    const original = view.getUint16(head + 10, true)
    view.setUint16(head + 10, original + 4800, true)
    assert.closeTo(info(bytes).durationSecs, 1.4, 0.001)
  })

  it("not Ogg, truncated, or Ogg without Opus: a reason, never a throw", () => {
    const mp3 = new Uint8Array([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0])
    assert.isFalse(looksLikeOgg(mp3))
    assert.include(Result.getFailure(readOggOpus(mp3)).pipe((left) => left._tag === "Some" ? left.value : ""), "not an Ogg stream")
    const truncated = voiceOgg().subarray(0, 200)
    assert.isTrue(Result.isFailure(readOggOpus(truncated)))
    const vorbis = new Uint8Array(voiceOgg())
    vorbis.set([...Buffer.from("OpusHeaX")], 28)
    const left = readOggOpus(vorbis)
    assert.isTrue(Result.isFailure(left) && left.failure.includes("OpusHead"))
    assert.isTrue(Result.isFailure(readOggOpus(new Uint8Array(0))))
  })

  it("waveform: long clips are bucketed to 256 samples, scaled to 0–255", () => {
    const sizes = Array.from({ length: 1000 }, (_, index) => (index < 500 ? 10 : 90))
    const samples = Buffer.from(waveformOf(sizes), "base64")
    assert.strictEqual(samples.length, 256)
    assert.strictEqual(samples[0], 0)
    assert.strictEqual(samples[255], 255)
    assert.strictEqual(waveformOf([]), "")
    assert.deepStrictEqual([...Buffer.from(waveformOf([5, 5, 5]), "base64")], [128, 128, 128])
  })
})
