import { assert, describe, it } from "@effect/vitest"
import { dataUrl, sniffImage } from "../../src/media/imageFormat"
import { pixelPng } from "../support/mediaFixtures"

describe("image sniffing", () => {
  it("PNG with its size from IHDR; JPEG, GIF (with size) and WebP by their signatures", () => {
    assert.deepStrictEqual(sniffImage(pixelPng()), { mimeType: "image/png", extension: "png", width: 4, height: 3 })
    assert.strictEqual(sniffImage(new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0x10]))?.mimeType, "image/jpeg")
    assert.deepStrictEqual(sniffImage(new Uint8Array([...Buffer.from("GIF89a"), 7, 0, 5, 0])), { mimeType: "image/gif", extension: "gif", width: 7, height: 5 })
    assert.strictEqual(sniffImage(new Uint8Array([...Buffer.from("RIFF"), 0, 0, 0, 0, ...Buffer.from("WEBPVP8 ")]))?.mimeType, "image/webp")
  })

  it("HTML, text, an empty body and a lying prefix are not images", () => {
    assert.isUndefined(sniffImage(new Uint8Array(Buffer.from("<!doctype html><html>"))))
    assert.isUndefined(sniffImage(new Uint8Array(0)))
    assert.isUndefined(sniffImage(new Uint8Array([0x89, 0x50, 0x4e, 0x47])))
    assert.isUndefined(sniffImage(new Uint8Array([...Buffer.from("RIFF"), 0, 0, 0, 0, ...Buffer.from("WAVE")])))
  })

  it("data URLs carry the bytes in base64", () => {
    assert.strictEqual(dataUrl("image/png", new Uint8Array([1, 2, 3])), "data:image/png;base64,AQID")
  })
})
