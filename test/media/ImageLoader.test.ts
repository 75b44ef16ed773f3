import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { VisionConfig } from "../../src/config/VisionConfig"
import { ImageLoader } from "../../src/media/ImageLoader"
import { locatorOf, MediaLibrary } from "../../src/media/MediaLibrary"
import { imageHost } from "../support/fakeMedia/imageHost"
import { webStack } from "../support/fakeWeb/webTestKit"
import { pixelPng } from "../support/mediaFixtures"

const loaderIn = (production: boolean) =>
  ImageLoader.Default.pipe(
    Layer.provideMerge(Layer.mergeAll(webStack({ production }).layer, MediaLibrary.Default, VisionConfig.make({ maxImageBytes: 1024 * 1024 })))
  )

const reasonOf = (effect: Effect.Effect<unknown, { readonly reason: string; readonly message: string; readonly operatorDetail?: string }>) =>
  Effect.map(Effect.flip(effect), (error) => ({ reason: error.reason, message: error.message, operatorDetail: error.operatorDetail }))

describe("ImageLoader (safe_http, VISION_MAX_IMAGE_MB, sniffing)", () => {
  it.effect("downloads a loopback image in development; HTML under an image name, a 404 and an oversize image are typed failures", () =>
    Effect.gen(function*() {
      const host = yield* imageHost({ bigBytes: 2 * 1024 * 1024 })
      const loader = yield* ImageLoader
      const image = yield* loader.load(`${host.origin}/pixel.png`)
      assert.deepStrictEqual(image.format, { mimeType: "image/png", extension: "png", width: 4, height: 3 })
      yield* loader.load(`${host.origin}/pixel.png`)
      assert.strictEqual(host.requests.filter((request) => request.url === "/pixel.png").length, 1, "a second load comes from the cache")
      assert.deepStrictEqual((yield* reasonOf(loader.load(`${host.origin}/page.png`))).reason, "not_an_image")
      const missing = yield* reasonOf(loader.load(`${host.origin}/missing.png`))
      assert.strictEqual(missing.reason, "http_status")
      assert.include(missing.message, "404")
      const big = yield* reasonOf(loader.load(`${host.origin}/big.png`))
      assert.strictEqual(big.reason, "too_large")
      assert.include(big.message, "VISION_MAX_IMAGE_MB")
    }).pipe(Effect.provide(loaderIn(false))))

  it.effect("in production a private address is refused before any byte is sent", () =>
    Effect.gen(function*() {
      const host = yield* imageHost()
      const blocked = yield* reasonOf((yield* ImageLoader).load(`${host.origin}/pixel.png`))
      assert.strictEqual(blocked.reason, "blocked")
      // The model reads the class; the address and the opt-in stay with operators.
      assert.strictEqual(blocked.message, "The image URL was refused (blocked: a private address)")
      assert.include(blocked.operatorDetail ?? "", "address 127.0.0.1 is loopback")
      assert.include(blocked.operatorDetail ?? "", "FETCH_URL_ALLOW_PRIVATE_NETWORK")
      assert.strictEqual(host.connections(), 0)
    }).pipe(Effect.provide(loaderIn(true))))

  it.effect("bytes held by the library load without the network; an unknown stored id and stored non-image bytes fail", () =>
    Effect.gen(function*() {
      const library = yield* MediaLibrary
      const loader = yield* ImageLoader
      const stored = yield* library.register({ _tag: "Stored", bytes: pixelPng(), mimeType: "image/png", filename: "pixel.png" })
      assert.strictEqual((yield* loader.load(locatorOf(stored))).format.width, 4)
      assert.strictEqual((yield* reasonOf(loader.load("media:img_zzzzzzzz"))).reason, "unknown_media")
      const text = yield* library.register({ _tag: "Stored", bytes: new Uint8Array(Buffer.from("hello")), mimeType: "image/png", filename: "fake.png" })
      assert.strictEqual((yield* reasonOf(loader.load(locatorOf(text)))).reason, "not_an_image")
    }).pipe(Effect.provide(loaderIn(true))))
})
