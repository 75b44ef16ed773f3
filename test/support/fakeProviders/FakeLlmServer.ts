/**
 * A scriptable HTTP server on 127.0.0.1 (port 0) that plays back vendor wire formats.
 *
 * - Each request is recorded (method, path with query, headers, raw body, parsed JSON body).
 * - Each request is answered by the next queued `FakeResponse`, or by the `handler`.
 * - A response is a status, headers and a list of parts written one by one: `write` (one
 *   socket write each, so frames can be split across TCP writes), `delayMs`, `hang` (never end),
 *   `destroy` (drop the connection mid-stream); or `neverRespond` (not even a status line).
 * - `request.closed` resolves when the client's socket closed, which is how tests prove that
 *   interrupting a stream aborts the HTTP request.
 *
 * - loopcord asks an OpenAI-compatible server for its model's context window (llama.cpp
 *   `GET /props`, Ollama `POST /api/show`, LM Studio `GET /api/v0/models`, `GET …/models`). Those
 *   probes are answered by the probe handler (default: 404, a server that says nothing), never from
 *   the queue, and are kept in `probes`, not `requests`: scripted answers and request counts are
 *   about model calls only.
 *
 * Vendor helpers that build the parts live next to it: `openAiCompatible.ts`, `anthropic.ts`,
 * `gemini.ts`. Plain Node (no Effect) so any test or benchmark can use it; `fakeLlmServer`
 * wraps it as a scoped Effect.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Effect } from "effect"

export type FakePart =
  | { readonly write: string | Uint8Array }
  | { readonly delayMs: number }
  | { readonly hang: true }
  | { readonly destroy: true }

export interface FakeResponse {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  readonly parts: ReadonlyArray<FakePart>
  /**
   * Milliseconds of silence between writes (default 0 = the next event-loop turn), so writes stay
   * separate TCP sends; `"none"` writes as fast as the socket drains (benchmarks).
   */
  readonly gapMs?: number | "none"
  /** Never send even the status line: a response that never starts. */
  readonly neverRespond?: boolean
}

export interface RecordedRequest {
  readonly method: string
  /** Path and query, e.g. `/v1beta/models/m:streamGenerateContent?alt=sse`. */
  readonly path: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  readonly body: string
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown
  /** Resolves when the client's socket for this request closed. */
  readonly closed: Promise<void>
  readonly isClosed: () => boolean
  /** Resolves when the server finished writing every part of the response. */
  readonly finished: Promise<void>
}

export type FakeHandler = (request: RecordedRequest) => FakeResponse

export interface FakeLlmServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  readonly url: string
  readonly port: number
  readonly requests: Array<RecordedRequest>
  /** Context-window probes (see above), in order. */
  readonly probes: Array<RecordedRequest>
  /** Answers the context-window probes (default: 404). */
  readonly setProbeHandler: (handler: FakeHandler) => void
  /** Queues responses for the next requests, in order (they win over the handler). */
  readonly enqueue: (...responses: ReadonlyArray<FakeResponse>) => void
  /** Answers requests when the queue is empty (default: 500 "no scripted response"). */
  readonly setHandler: (handler: FakeHandler) => void
  /** Resolves with the n-th request (0-based) once it arrived. */
  readonly request: (index: number) => Promise<RecordedRequest>
  readonly close: () => Promise<void>
}

const sleep = (ms: number) => new Promise<void>((resolve) => (ms <= 0 ? setImmediate(resolve) : setTimeout(resolve, ms)))

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Whether a request is a context-window probe rather than a model call. */
export const isWindowProbe = (method: string, path: string): boolean => {
  const route = path.split("?")[0] ?? path
  return (method === "GET" && (/\/props$/.test(route) || /\/models$/.test(route))) || (method === "POST" && /\/api\/show$/.test(route))
}

const noProbeAnswer: FakeHandler = () => ({
  status: 404,
  headers: { "content-type": "application/json" },
  parts: [{ write: JSON.stringify({ error: { message: "not found" } }) }]
})

const noScript: FakeHandler = () => ({
  status: 500,
  headers: { "content-type": "application/json" },
  parts: [{ write: JSON.stringify({ error: { message: "no scripted response" } }) }]
})

export const startFakeLlmServer = async (options: { readonly handler?: FakeHandler } = {}): Promise<FakeLlmServer> => {
  const queue: Array<FakeResponse> = []
  const requests: Array<RecordedRequest> = []
  const waiters: Array<{ readonly index: number; readonly resolve: (request: RecordedRequest) => void }> = []
  // One close listener per socket (keep-alive sockets serve many requests): it settles every
  // waiter registered on that socket.
  const closeWaiters = new Map<Socket, Array<() => void>>()
  const onClose = (socket: Socket): Promise<void> =>
    socket.destroyed || !closeWaiters.has(socket)
      ? Promise.resolve()
      : new Promise((resolve) => closeWaiters.get(socket)!.push(resolve))
  let handler = options.handler ?? noScript
  let probeHandler = noProbeAnswer
  const probes: Array<RecordedRequest> = []

  const play = async (response: FakeResponse, res: ServerResponse, socket: Socket): Promise<void> => {
    if (response.neverRespond === true) {
      await onClose(socket)
      return
    }
    res.writeHead(response.status ?? 200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      ...response.headers
    })
    res.flushHeaders()
    for (const part of response.parts) {
      if (socket.destroyed) return
      if ("write" in part) {
        const flushed = res.write(part.write)
        if (response.gapMs !== "none") await sleep(response.gapMs ?? 0)
        else if (!flushed) await new Promise<void>((resolve) => res.once("drain", () => resolve()))
      } else if ("delayMs" in part) {
        await sleep(part.delayMs)
      } else if ("hang" in part) {
        await onClose(socket)
        return
      } else {
        socket.destroy()
        return
      }
    }
    res.end()
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket
    const pieces: Array<Buffer> = []
    req.on("data", (piece: Buffer) => pieces.push(piece))
    req.on("end", () => {
      let closed = false
      const closedPromise = onClose(socket).then(() => {
        closed = true
      })
      const body = Buffer.concat(pieces).toString("utf8")
      let markFinished = () => {}
      const finished = new Promise<void>((resolve) => (markFinished = resolve))
      const recorded: RecordedRequest = {
        method: req.method ?? "GET",
        path: req.url ?? "/",
        headers: req.headers,
        body,
        json: parseJson(body),
        closed: closedPromise,
        isClosed: () => closed,
        finished
      }
      if (isWindowProbe(recorded.method, recorded.path)) {
        probes.push(recorded)
        play(probeHandler(recorded), res, socket).then(markFinished, () => {
          markFinished()
          socket.destroy()
        })
        return
      }
      requests.push(recorded)
      for (const waiter of waiters.filter((candidate) => candidate.index === requests.length - 1)) {
        waiter.resolve(recorded)
      }
      const response = queue.shift() ?? handler(recorded)
      play(response, res, socket).then(markFinished, () => {
        markFinished()
        socket.destroy()
      })
    })
  })
  server.on("connection", (socket: Socket) => {
    closeWaiters.set(socket, [])
    socket.once("close", () => {
      const waiters = closeWaiters.get(socket) ?? []
      closeWaiters.delete(socket)
      for (const wake of waiters) wake()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    probes,
    setProbeHandler: (next) => {
      probeHandler = next
    },
    enqueue: (...responses) => {
      queue.push(...responses)
    },
    setHandler: (next) => {
      handler = next
    },
    request: (index) =>
      requests[index] !== undefined
        ? Promise.resolve(requests[index])
        : new Promise((resolve) => waiters.push({ index, resolve })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of closeWaiters.keys()) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** The server as a scoped resource: closed (all sockets destroyed) when the scope closes. */
export const fakeLlmServer = (options: { readonly handler?: FakeHandler } = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startFakeLlmServer(options)),
    (server) => Effect.promise(() => server.close())
  )

/** Splits text into writes of the given sizes (cycled), e.g. to cut frames across TCP sends. */
export const splitWrites = (text: string, sizes: ReadonlyArray<number>): ReadonlyArray<FakePart> => {
  const parts: Array<FakePart> = []
  let offset = 0
  let turn = 0
  while (offset < text.length) {
    const size = Math.max(1, sizes[turn % sizes.length] ?? text.length)
    parts.push({ write: text.slice(offset, offset + size) })
    offset += size
    turn += 1
  }
  return parts
}

/** Splits UTF-8 bytes (so a multi-byte character can be cut in two writes). */
export const splitBytes = (text: string, sizes: ReadonlyArray<number>): ReadonlyArray<FakePart> => {
  const bytes = Buffer.from(text, "utf8")
  const parts: Array<FakePart> = []
  let offset = 0
  let turn = 0
  while (offset < bytes.length) {
    const size = Math.max(1, sizes[turn % sizes.length] ?? bytes.length)
    parts.push({ write: bytes.subarray(offset, offset + size) })
    offset += size
    turn += 1
  }
  return parts
}

/** Serializes SSE frames: `{ event?, data }` or `{ comment }`, LF or CRLF line ends, multi-line data split on `\n`. */
export type SseOut = { readonly event?: string; readonly data: string } | { readonly comment: string }

export const sseText = (frames: ReadonlyArray<SseOut>, options: { readonly crlf?: boolean } = {}): string => {
  const eol = options.crlf === true ? "\r\n" : "\n"
  return frames
    .map((frame) => {
      if ("comment" in frame) return `:${frame.comment.length > 0 ? " " : ""}${frame.comment}${eol}${eol}`
      const lines = frame.data.split("\n").map((line) => `data: ${line}${eol}`).join("")
      return `${frame.event === undefined ? "" : `event: ${frame.event}${eol}`}${lines}${eol}`
    })
    .join("")
}

/** A JSON response (status and body), e.g. an error envelope. */
export const jsonResponse = (status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): FakeResponse => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  parts: [{ write: JSON.stringify(body) }]
})
