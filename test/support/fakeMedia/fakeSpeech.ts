import { voiceOgg } from "../mediaFixtures"
import { json, type MediaServer, startMediaServer } from "./mediaServer"

export interface FakeSpeechOptions {
  /** `mp3`: answer MPEG audio whatever was asked (a server without opus support). */
  readonly format?: "opus" | "mp3"
  readonly failWith?: number
}

export interface FakeSpeech extends MediaServer {
  readonly baseUrl: string
  /** Bodies of `POST /v1/audio/speech`, parsed. */
  readonly bodies: () => ReadonlyArray<Record<string, unknown>>
}

/**
 * An OpenAI-compatible speech endpoint on loopback: `POST /v1/audio/speech` with `model`,
 * `input`, `voice` (and optional `instructions`); `response_format: "opus"` answers the Ogg
 * Opus fixture as `audio/ogg`. Unknown formats are refused as OpenAI does.
 */
export const startFakeSpeech = async (options: FakeSpeechOptions = {}): Promise<FakeSpeech> => {
  const server = await startMediaServer((request, response) => {
    if (request.method !== "POST" || new URL(request.url, "http://fake").pathname !== "/v1/audio/speech") {
      return json(response, 404, { error: { message: "no such route" } })
    }
    if (options.failWith !== undefined) return json(response, options.failWith, { error: { message: `scripted failure ${options.failWith}` } })
    const body = JSON.parse(request.body.toString("utf8")) as Record<string, unknown>
    for (const key of ["model", "input", "voice"]) {
      if (typeof body[key] !== "string" || body[key] === "") throw new Error(`${key} is required`)
    }
    const format = body["response_format"] ?? "mp3"
    if (!["mp3", "opus", "aac", "flac", "wav", "pcm"].includes(String(format))) throw new Error(`unsupported response_format ${String(format)}`)
    if (options.format === "mp3" || format === "mp3") {
      response.writeHead(200, { "content-type": "audio/mpeg" })
      response.end(Buffer.from([0x49, 0x44, 0x33, 0x04, 0, 0, 0, 0, 0, 0, 0xff, 0xfb, 0x90, 0x64]))
      return
    }
    response.writeHead(200, { "content-type": "audio/ogg" })
    response.end(Buffer.from(voiceOgg()))
  })
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    bodies: () => server.requests.filter((request) => request.method === "POST").map((request) => JSON.parse(request.body.toString("utf8")) as Record<string, unknown>)
  }
}
