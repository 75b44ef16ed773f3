import { assert, describe, it } from "@effect/vitest"
import { type AttachmentFacts, type EmbedFacts, MAX_IMAGES_PER_MESSAGE, messageImages } from "../../src/discord/messageImages"

const attachment = (name: string, contentType: string | null, size = 100): AttachmentFacts => ({
  proxyURL: `https://media.example/attachments/${name}`,
  contentType,
  size
})
const embed = (image: string | undefined, thumbnail: string | undefined): EmbedFacts => ({
  image: image === undefined ? null : { proxyURL: image },
  thumbnail: thumbnail === undefined ? null : { proxyURL: thumbnail }
})

describe("messageImages", () => {
  it("image attachments by proxy URL with content type and size; other attachments left out", () => {
    assert.deepStrictEqual(
      messageImages({ attachments: [attachment("a.png", "image/png", 2048), attachment("b.txt", "text/plain"), attachment("c", null)], embeds: [] }),
      [{ url: "https://media.example/attachments/a.png", mimeType: "image/png", sizeBytes: 2048 }]
    )
  })

  it("a size that is not a byte count is left out rather than passed on", () => {
    const [image] = messageImages({ attachments: [attachment("a.png", "image/png", Number.NaN)], embeds: [] })
    assert.deepStrictEqual(image, { url: "https://media.example/attachments/a.png", mimeType: "image/png" })
  })

  it("one picture per embed: its image's proxy URL, else its thumbnail's; none without a proxy URL", () => {
    const embeds: ReadonlyArray<EmbedFacts> = [
      embed("https://media.example/hero.webp", "https://media.example/logo.png"),
      embed(undefined, "https://media.example/linked.png"),
      { image: { proxyURL: undefined }, thumbnail: null },
      { image: { proxyURL: "" }, thumbnail: { proxyURL: "https://media.example/fallback.png" } },
      embed(undefined, undefined)
    ]
    assert.deepStrictEqual(messageImages({ attachments: [], embeds }).map((image) => image.url), [
      "https://media.example/hero.webp",
      "https://media.example/linked.png",
      "https://media.example/fallback.png"
    ])
  })

  it("the same URL is listed once, attachments first, and at most MAX_IMAGES_PER_MESSAGE in all", () => {
    const shared = attachment("same.png", "image/png")
    const images = messageImages({
      attachments: Array.from({ length: 8 }, (_, index) => attachment(`${index}.png`, "image/png")),
      embeds: [embed(shared.proxyURL, undefined), embed(shared.proxyURL, undefined), ...Array.from({ length: 8 }, (_, index) => embed(`https://media.example/e${index}`, undefined))]
    })
    assert.strictEqual(images.length, MAX_IMAGES_PER_MESSAGE)
    assert.strictEqual(images.filter((image) => image.url === shared.proxyURL).length, 1)
    assert.strictEqual(images[0]?.url, "https://media.example/attachments/0.png")
    assert.strictEqual(images.at(-1)?.url, "https://media.example/e0")
  })
})
