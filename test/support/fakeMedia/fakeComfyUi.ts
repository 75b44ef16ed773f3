import { randomUUID } from "node:crypto"
import { sniffImage } from "../../../src/media/imageFormat"
import { pixelPng } from "../mediaFixtures"
import { parseMultipart } from "../multipart"
import { json, type MediaServer, startMediaServer } from "./mediaServer"

export interface FakeComfyUiOptions {
  /** History polls that still show the job as running (default 2). */
  readonly pollsUntilDone?: number
  /** The job never finishes. */
  readonly neverFinish?: boolean
  /** The job ends with an execution error. */
  readonly failJob?: boolean
  /** `/prompt` refuses the workflow (400 with node errors). */
  readonly rejectPrompt?: boolean
  /** What `/view` serves (default: the PNG fixture). */
  readonly outputBytes?: Uint8Array
}

export interface FakeComfyUi extends MediaServer {
  /** Workflows queued through `/prompt`, as received. */
  readonly prompts: ReadonlyArray<Record<string, unknown>>
  /** Files uploaded through `/upload/image`: stored name → bytes. */
  readonly uploads: ReadonlyMap<string, Buffer>
  /** Prompt ids taken off the queue with `POST /queue {delete}`. */
  readonly deleted: ReadonlyArray<string>
}

/**
 * ComfyUI's HTTP API on loopback: `POST /upload/image` (multipart `image`, stored under its
 * name), `POST /prompt` (`{ prompt, client_id }` ⇒ `{ prompt_id, number, node_errors }`),
 * `GET /history/<id>` (`{}` while running, then the entry with `outputs` and `status`),
 * `GET /view?filename&subfolder&type` and `POST /queue {delete}`.
 */
export const startFakeComfyUi = async (options: FakeComfyUiOptions = {}): Promise<FakeComfyUi> => {
  const prompts: Array<Record<string, unknown>> = []
  const uploads = new Map<string, Buffer>()
  const deleted: Array<string> = []
  const polls = new Map<string, number>()
  const output = Buffer.from(options.outputBytes ?? pixelPng())
  const server = await startMediaServer((request, response) => {
    const url = new URL(request.url, "http://fake")
    if (request.method === "POST" && url.pathname === "/upload/image") {
      const parts = parseMultipart(request.headers["content-type"], request.body)
      const file = parts.find((part) => part.name === "image")
      if (file?.filename === undefined) throw new Error("upload needs an image file part")
      if (sniffImage(file.data) === undefined) throw new Error("the uploaded file is not an image")
      uploads.set(file.filename, file.data)
      json(response, 200, { name: file.filename, subfolder: "", type: parts.find((part) => part.name === "type")?.data.toString() ?? "input" })
      return
    }
    if (request.method === "POST" && url.pathname === "/prompt") {
      const body = JSON.parse(request.body.toString("utf8")) as { prompt?: unknown; client_id?: unknown }
      if (typeof body.prompt !== "object" || body.prompt === null) throw new Error("prompt must be a workflow object")
      if (options.rejectPrompt === true) {
        json(response, 400, { error: { type: "prompt_outputs_failed_validation", message: "Prompt outputs failed validation" }, node_errors: { "3": {} } })
        return
      }
      prompts.push(body.prompt as Record<string, unknown>)
      const id = randomUUID()
      polls.set(id, 0)
      json(response, 200, { prompt_id: id, number: prompts.length, node_errors: {} })
      return
    }
    const history = /^\/history\/([^/]+)$/.exec(url.pathname)
    if (request.method === "GET" && history !== null) {
      const id = decodeURIComponent(history[1] ?? "")
      const seen = (polls.get(id) ?? 0) + 1
      polls.set(id, seen)
      if (options.neverFinish === true || seen <= (options.pollsUntilDone ?? 2)) return json(response, 200, {})
      if (options.failJob === true) {
        return json(response, 200, {
          [id]: {
            outputs: {},
            status: {
              status_str: "error",
              completed: false,
              messages: [["execution_start", {}], ["execution_error", { node_type: "KSampler", exception_message: "CUDA out of memory" }]]
            }
          }
        })
      }
      return json(response, 200, {
        [id]: {
          prompt: [prompts.length, id, {}, {}, []],
          outputs: { "9": { images: [{ filename: "loopcord_00001_.png", subfolder: "", type: "output" }] } },
          status: { status_str: "success", completed: true, messages: [] }
        }
      })
    }
    if (request.method === "GET" && url.pathname === "/view") {
      if (url.searchParams.get("filename") !== "loopcord_00001_.png" || url.searchParams.get("type") !== "output") {
        return json(response, 404, { error: "no such file" })
      }
      response.writeHead(200, { "content-type": "image/png" })
      response.end(output)
      return
    }
    if (request.method === "POST" && url.pathname === "/queue") {
      const body = JSON.parse(request.body.toString("utf8")) as { delete?: ReadonlyArray<string> }
      deleted.push(...(body.delete ?? []))
      return json(response, 200, {})
    }
    json(response, 404, { error: `no route ${request.method} ${url.pathname}` })
  })
  return { ...server, prompts, uploads, deleted }
}
