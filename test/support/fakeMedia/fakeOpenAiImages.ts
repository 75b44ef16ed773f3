import { sniffImage } from "../../../src/media/imageFormat"
import { pixelPng } from "../mediaFixtures"
import { parseMultipart } from "../multipart"
import { json, type MediaServer, startMediaServer } from "./mediaServer"

export interface FakeOpenAiImagesOptions {
  /** How the image comes back: inline base64 (default) or a URL on this server. */
  readonly answer?: "b64_json" | "url"
  /** Answer every request with this status and an OpenAI error envelope. */
  readonly failWith?: number
  /** Serve these bytes as "the image" (default: the PNG fixture). */
  readonly imageBytes?: Uint8Array
  /** Never answer (a stalled backend). */
  readonly hang?: boolean
  /** With `answer: "url"`: this link instead of the image on this server (`{origin}` is replaced by it). */
  readonly link?: string
}

export interface FakeOpenAiImages extends MediaServer {
  /** `${origin}/v1`, what IMAGE_BASE_URL is set to. */
  readonly baseUrl: string
}

/**
 * The OpenAI Images API on loopback: `POST /v1/images/generations` (JSON) and
 * `POST /v1/images/edits` (multipart with an `image` file part that must really be an image),
 * answering `{ created, data: [{ b64_json | url, revised_prompt }] }` as OpenAI does. Requests
 * are checked like the real API: a bearer key when one is expected, required fields present.
 */
export const startFakeOpenAiImages = async (options: FakeOpenAiImagesOptions = {}): Promise<FakeOpenAiImages> => {
  const image = Buffer.from(options.imageBytes ?? pixelPng())
  let origin = ""
  const server = await startMediaServer((request, response) => {
    if (options.hang === true) return
    const path = new URL(request.url, "http://fake").pathname
    if (request.method === "GET" && path === "/files/missing.png") {
      response.writeHead(404, { "content-type": "text/plain" })
      response.end("internal storage node 10.9.8.7 has no such object")
      return
    }
    if (request.method === "GET" && path === "/files/generated.png") {
      response.writeHead(200, { "content-type": "image/png" })
      response.end(image)
      return
    }
    if (options.failWith !== undefined) {
      json(response, options.failWith, { error: { message: `scripted failure ${options.failWith}`, type: "server_error" } })
      return
    }
    let prompt: unknown
    if (request.method === "POST" && path === "/v1/images/generations") {
      if (!String(request.headers["content-type"]).includes("application/json")) throw new Error("generations take JSON")
      const body = JSON.parse(request.body.toString("utf8")) as Record<string, unknown>
      if (typeof body["model"] !== "string" || typeof body["size"] !== "string") throw new Error("model and size are required")
      prompt = body["prompt"]
    } else if (request.method === "POST" && path === "/v1/images/edits") {
      const parts = parseMultipart(request.headers["content-type"], request.body)
      const file = parts.find((part) => part.name === "image" || part.name === "image[]")
      if (file === undefined || file.filename === undefined) throw new Error("edits need an image file part")
      if (sniffImage(file.data) === undefined) throw new Error("the image part is not an image")
      prompt = parts.find((part) => part.name === "prompt")?.data.toString("utf8")
    } else {
      json(response, 404, { error: { message: `no route ${request.method} ${path}` } })
      return
    }
    if (typeof prompt !== "string" || prompt.trim() === "") throw new Error("prompt is required")
    const link = (options.link ?? "{origin}/files/generated.png").replace("{origin}", origin)
    const item = options.answer === "url" ? { url: link } : { b64_json: image.toString("base64") }
    json(response, 200, { created: 1_700_000_000, data: [{ ...item, revised_prompt: `revised: ${prompt}` }] })
  })
  origin = server.origin
  return { ...server, baseUrl: `${server.origin}/v1` }
}
