/**
 * What a vision-capable vendor sees of images, for the fake servers: each vendor's wire form is
 * checked (OpenAI `image_url` parts, Anthropic base64 `image` blocks, Gemini `inlineData` /
 * `inline_data` parts) and decoded, and a handler answers by describing what it received — so a
 * test proves the image bytes themselves reached the model.
 *
 *   server.setHandler(visionHandler("openai"))   // answers "I see 1 image: image/png 4×3."
 */
import { sniffImage } from "../../../src/media/imageFormat"
import type { FakeHandler, FakeResponse } from "./FakeLlmServer"
import { jsonResponse } from "./FakeLlmServer"
import { anthropicStream, messageDelta, messageStart, messageStop, textBlock } from "./anthropic"
import { geminiFinish, geminiStream, geminiText, usageMetadata } from "./gemini"
import { finishChunk, openAiStream, textChunk, usageChunk } from "./openAiCompatible"

export type VisionVendor = "openai" | "anthropic" | "gemini"

export interface SeenImage {
  readonly mimeType: string
  readonly bytes: Buffer
}

export interface SeenImages {
  readonly images: ReadonlyArray<SeenImage>
  /** Images sent by URL instead of inline (the fake cannot fetch them). */
  readonly urls: ReadonlyArray<string>
  /** Every text the request carries, joined (placeholder lines show up here). */
  readonly text: string
}

const record = (value: unknown): Record<string, unknown> => (typeof value === "object" && value !== null ? value as Record<string, unknown> : {})
const list = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const decodeBase64 = (data: unknown, where: string): Buffer => {
  if (typeof data !== "string" || !/^[A-Za-z0-9+/]+=*$/.test(data)) throw new Error(`${where}: data is not base64`)
  return Buffer.from(data, "base64")
}

const fromDataUrl = (url: string, where: string): SeenImage => {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  if (match === null) throw new Error(`${where}: not a base64 data URL`)
  return { mimeType: match[1] ?? "", bytes: decodeBase64(match[2], where) }
}

/** The images (and texts) of a request body in `vendor`'s wire form; throws on a malformed image part. */
export const imagesSent = (vendor: VisionVendor, body: unknown): SeenImages => {
  const images: Array<SeenImage> = []
  const urls: Array<string> = []
  const texts: Array<string> = []
  const json = record(body)
  if (vendor === "openai") {
    for (const message of list(json["messages"])) {
      const content = record(message)["content"]
      if (typeof content === "string") texts.push(content)
      for (const part of list(content)) {
        const item = record(part)
        if (item["type"] === "text") texts.push(String(item["text"]))
        else if (item["type"] === "image_url") {
          if (record(message)["role"] !== "user") throw new Error("image_url parts are accepted in user messages only")
          const url = record(item["image_url"])["url"]
          if (typeof url !== "string") throw new Error("image_url.url must be a string")
          if (url.startsWith("data:")) images.push(fromDataUrl(url, "image_url"))
          else urls.push(url)
        } else throw new Error(`unknown content part type ${String(item["type"])}`)
      }
    }
  } else if (vendor === "anthropic") {
    const blocks = (content: unknown): void => {
      if (typeof content === "string") texts.push(content)
      for (const block of list(content)) {
        const item = record(block)
        if (item["type"] === "text") texts.push(String(item["text"]))
        else if (item["type"] === "tool_result") blocks(item["content"])
        else if (item["type"] === "image") {
          const source = record(item["source"])
          if (source["type"] === "base64") {
            if (!/^image\/(png|jpeg|gif|webp)$/.test(String(source["media_type"]))) throw new Error(`unsupported media_type ${String(source["media_type"])}`)
            images.push({ mimeType: String(source["media_type"]), bytes: decodeBase64(source["data"], "image.source") })
          } else if (source["type"] === "url") urls.push(String(source["url"]))
          else throw new Error("image.source.type must be base64 or url")
        }
      }
    }
    if (typeof json["system"] === "string") texts.push(json["system"])
    for (const message of list(json["messages"])) blocks(record(message)["content"])
  } else {
    for (const content of list(json["contents"])) {
      for (const part of list(record(content)["parts"])) {
        const item = record(part)
        if (typeof item["text"] === "string") texts.push(item["text"])
        const inline = record(item["inlineData"] ?? item["inline_data"])
        if (Object.keys(inline).length > 0) {
          images.push({ mimeType: String(inline["mimeType"] ?? inline["mime_type"]), bytes: decodeBase64(inline["data"], "inlineData") })
        }
        const file = record(item["fileData"] ?? item["file_data"])
        if (Object.keys(file).length > 0) urls.push(String(file["fileUri"] ?? file["file_uri"]))
      }
    }
  }
  return { images, urls, text: texts.join("\n") }
}

/** "I see 1 image: image/png 4×3." — what the fake answers, from the decoded bytes. */
export const describeSeen = (seen: SeenImages): string => {
  if (seen.images.length === 0) return `I see no image.${seen.urls.length > 0 ? ` (${seen.urls.length} by URL)` : ""}`
  const each = seen.images.map((image) => {
    const format = sniffImage(image.bytes)
    if (format === undefined) return `${image.mimeType} that is not an image`
    if (format.mimeType !== image.mimeType) return `${image.mimeType} that is really ${format.mimeType}`
    return `${format.mimeType} ${format.width ?? "?"}×${format.height ?? "?"}`
  })
  return `I see ${seen.images.length} image${seen.images.length === 1 ? "" : "s"}: ${each.join(", ")}.`
}

/** A streamed text answer in `vendor`'s format. */
export const vendorText = (vendor: VisionVendor, text: string): FakeResponse =>
  vendor === "openai"
    ? openAiStream([textChunk(text), finishChunk("stop"), usageChunk(20, 8)])
    : vendor === "anthropic"
    ? anthropicStream([messageStart(20), ...textBlock(0, [text]), messageDelta("end_turn", 8), messageStop()])
    : geminiStream([geminiText(text), geminiFinish("STOP", usageMetadata(20, 8))])

/** Answers every request by describing the images it carried; a malformed image part gets a 400. */
export const visionHandler = (vendor: VisionVendor): FakeHandler => (request) => {
  try {
    return vendorText(vendor, describeSeen(imagesSent(vendor, request.json)))
  } catch (error) {
    return jsonResponse(400, { error: { message: error instanceof Error ? error.message : String(error), type: "invalid_request_error" } })
  }
}
