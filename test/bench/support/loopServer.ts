/**
 * The loopback OpenAI-compatible server every loop benchmark shares (one process, all
 * contenders), scripted per request from the conversation it receives, plus a second loopback
 * server that tools call over HTTP.
 *
 * A turn is named by its user message: `turn:<id>:<scenario>`. The server counts the requests
 * of each turn (request `k` is the k-th model call of that turn, whichever framework sent it)
 * and answers from the scenario:
 *
 * - `loop:<n>`     requests 0..n-1 ask for `echo {text:"<id>#k"}`; request n streams the final
 *                  text `finalText(id, echoes)` built from the `{"echoed":…}` tool messages it
 *                  received, so a framework that lost or garbled a tool result fails the text check.
 * - `unknown:<n>`  requests 0..n-1 ask for `no_such_tool {step:k}` (a tool no contender has:
 *                  every step is an unknown-tool error sent back to the model); request n streams
 *                  `unknownToolText(id, n)` (cold start-up steps, startup.bench.ts).
 * - `ttft`         the first text delta goes out alone at once, the rest 5 ms later.
 * - `park`         request 0 asks for `echo`; request 1 sends one delta and holds the stream
 *                  open until `POST /__release` (memory of in-flight turns).
 * - `killstream`   one delta, then the stream hangs until the client closes the socket.
 * - `killtool`     request 0 asks for `fetch_slow {id}` (the tool GETs `/slow/<id>` on the tool
 *                  server, which never answers); any later request is recorded as a violation.
 * - `hangtool`     request 0 asks for `never_tool`; request 1 answers `continued`.
 * - `parallel:<ms>` request 0 streams ONE assistant message with three calls at once
 *                  (`tool_calls` indexes 0, 1, 2: `slow_a`, `slow_b`, `slow_c` with
 *                  `{id:"<id>#a", ms}`…, their argument deltas interleaved); each tool GETs
 *                  `/slow/<id>#x?ms=<ms>` on the tool server, which answers after `ms`. Later
 *                  requests record the tool results they carry (`results`) and stream
 *                  `parallelText(id, fetched)` from them.
 * - `plan:<steps>` (soak) one letter per request: `e` echo call, `f` fetch_slow call (tool
 *                  server answers after 5 ms), `n` never_tool call, `t` final text (deltas 10 ms
 *                  apart), `s` stall (a delta, then silence), `r` 429 with Retry-After, `x` 500,
 *                  `d` connection dropped mid-stream, `l` a long final text (`soakLongText`,
 *                  in 40 deltas 15 ms apart). Past the end: final text.
 *
 * Every request is stamped with `process.hrtime.bigint()` (CLOCK_MONOTONIC, comparable across
 * processes on one host): arrival (request headers parsed), first text write, last byte
 * handed to the kernel, and socket close when the client closed it before the response ended.
 *
 * Control (same port): `GET /__records?clear=1` (stamps by turn, tool calls, connection count),
 * `GET /__parked` (streams parked), `POST /__release` (end every parked stream).
 *
 * Run as a process: `node --import tsx test/bench/support/loopServer.ts` prints
 * `PORTS <model> <tool>` and exits when stdin closes.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

export const nowNs = (): number => Number(process.hrtime.bigint())

export interface StepRecord {
  readonly index: number
  readonly arrived: number
  firstWrite: number | undefined
  lastByte: number | undefined
  /** The client closed the socket before the response ended. */
  closed: number | undefined
  /** What the server answered (`echo`, `text`, `429`...). */
  readonly answer: string
  /** `parallel`, request 0: the calls it asked for, in index order. */
  calls?: ReadonlyArray<ParallelCall>
  /** `parallel`, later requests: the `tool` messages the request carried, in order. */
  results?: ReadonlyArray<ToolResultSeen>
  /** `parallel`, later requests: the call ids of the assistant messages it carried, in order. */
  assistantCallIds?: ReadonlyArray<string>
}

export interface ParallelCall {
  readonly callId: string
  readonly name: string
  /** The `id` argument: what the tool fetches, and so what its result must say. */
  readonly fetchId: string
}

export interface ToolResultSeen {
  readonly toolCallId: string | undefined
  /** The `fetched` field of the result, when the content has one. */
  readonly fetched: string | undefined
}

export interface ToolCallRecord {
  readonly arrived: number
  closed: number | undefined
  /** When the answer was handed to the kernel (answered requests only). */
  answered?: number
}

export interface Records {
  readonly turns: Record<string, ReadonlyArray<StepRecord>>
  readonly toolCalls: Record<string, ToolCallRecord>
  /** TCP connections the model server accepted since the last clear. */
  readonly connections: number
}

/** The final text of a `loop` turn: what every contender must reproduce exactly. */
export const finalText = (id: string, echoes: ReadonlyArray<string>): string =>
  `Turn ${id} is done after ${echoes.length} tool calls: ${echoes.join(", ")}.`

export const expectedLoopText = (id: string, steps: number): string =>
  finalText(id, Array.from({ length: steps }, (_, k) => `${id}#${k}`))

export const unknownToolText = (id: string, steps: number): string => `Turn ${id} finished after ${steps} unknown-tool steps.`

/** The tools of the `parallel` scenario, by `tool_calls` index. */
export const PARALLEL_TOOLS = ["slow_a", "slow_b", "slow_c"] as const
export const parallelFetchId = (id: string, index: number): string => `${id}#${"abc"[index]}`

/** The final text of a `parallel` turn, from the results the server got back (sorted). */
export const parallelText = (id: string, fetched: ReadonlyArray<string>): string =>
  `Turn ${id} got ${fetched.length} tool results: ${[...fetched].sort().join(", ")}.`

export const expectedParallelText = (id: string): string =>
  parallelText(id, PARALLEL_TOOLS.map((_, index) => parallelFetchId(id, index)))

export const TTFT_TEXT = "Hello there, this is the first token and then the rest."
export const CONTINUED_TEXT = "continued after the tool gave up."
export const soakText = (id: string) => `Soak turn ${id} answered in full.`
/** The long answer of the soak's delivery phase (`l`): numbered sentences over two Discord messages. */
export const SOAK_LONG_SENTENCES = 60
export const soakLongText = (id: string) =>
  Array.from({ length: SOAK_LONG_SENTENCES }, (_, i) => `Turn ${id} sentence ${i + 1} carries a few more words. `).join("")

let created = 1_700_000_000
const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
  `data: ${JSON.stringify({
    id: "chatcmpl-bench",
    object: "chat.completion.chunk",
    created: created++,
    model: "bench-model",
    choices: [{ index: 0, delta: { role: "assistant", ...delta }, finish_reason: finishReason }]
  })}\n\n`
const usage = `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "bench-model", choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`
const done = "data: [DONE]\n\n"

let callCounter = 0
const toolCallBody = (name: string, args: Record<string, unknown>) =>
  chunk({ tool_calls: [{ index: 0, id: `call_${++callCounter}`, type: "function", function: { name, arguments: JSON.stringify(args) } }] }) +
  chunk({}, "tool_calls") + usage + done

/** Splits text into `parts` deltas of about equal length. */
const deltas = (text: string, parts: number): Array<string> => {
  const size = Math.ceil(text.length / parts)
  const out: Array<string> = []
  for (let at = 0; at < text.length; at += size) out.push(text.slice(at, at + size))
  return out
}
const textBody = (pieces: ReadonlyArray<string>) => pieces.map((piece) => chunk({ content: piece })).join("") + chunk({}, "stop") + usage + done

/**
 * One assistant message with one call per name: every call opens (id, name, empty arguments)
 * by its index, then the argument fragments arrive interleaved across the calls, as a model
 * emitting parallel calls streams them.
 */
const parallelCallsBody = (calls: ReadonlyArray<{ readonly callId: string; readonly name: string; readonly args: Record<string, unknown> }>) => {
  const opens = calls.map((call, index) =>
    chunk({ tool_calls: [{ index, id: call.callId, type: "function", function: { name: call.name, arguments: "" } }] })
  )
  const fragments = calls.map((call) => deltas(JSON.stringify(call.args), 3))
  const interleaved: Array<string> = []
  for (let piece = 0; piece < Math.max(...fragments.map((f) => f.length)); piece += 1) {
    fragments.forEach((parts, index) => {
      if (piece < parts.length) interleaved.push(chunk({ tool_calls: [{ index, function: { arguments: parts[piece] } }] }))
    })
  }
  return [...opens, ...interleaved].join("") + chunk({}, "tool_calls") + usage + done
}

const sse = { "content-type": "text/event-stream", "cache-control": "no-cache" }

interface ParsedTurn {
  readonly id: string
  readonly scenario: string
  readonly echoes: ReadonlyArray<string>
  readonly results: ReadonlyArray<ToolResultSeen>
  readonly assistantCallIds: ReadonlyArray<string>
}

const parseTurn = (body: unknown): ParsedTurn | undefined => {
  const messages = (body as { messages?: unknown } | undefined)?.messages
  if (!Array.isArray(messages)) return undefined
  let id: string | undefined
  let scenario = ""
  const echoes: Array<string> = []
  const results: Array<ToolResultSeen> = []
  const assistantCallIds: Array<string> = []
  for (const message of messages as Array<{ role?: unknown; content?: unknown; tool_call_id?: unknown; tool_calls?: unknown }>) {
    const content = typeof message.content === "string"
      ? message.content
      : Array.isArray(message.content)
      ? (message.content as Array<{ text?: unknown }>).map((part) => (typeof part.text === "string" ? part.text : "")).join("")
      : ""
    if (message.role === "user") {
      const match = /^turn:([^:]+):(.*)$/.exec(content)
      if (match !== null) {
        id = match[1]
        scenario = match[2] ?? ""
      }
    } else if (message.role === "assistant" && Array.isArray(message.tool_calls)) {
      for (const call of message.tool_calls as Array<{ id?: unknown }>) assistantCallIds.push(String(call.id))
    } else if (message.role === "tool") {
      const echoed = /"echoed":"([^"]*)"/.exec(content)
      if (echoed !== null) echoes.push(echoed[1]!)
      const fetched = /"fetched":"([^"]*)"/.exec(content)
      results.push({ toolCallId: typeof message.tool_call_id === "string" ? message.tool_call_id : undefined, fetched: fetched?.[1] })
    }
  }
  return id === undefined ? undefined : { id, scenario, echoes, results, assistantCallIds }
}

export interface LoopServer {
  readonly modelPort: number
  readonly toolPort: number
  readonly close: () => Promise<void>
}

export const startLoopServer = async (): Promise<LoopServer> => {
  const turns = new Map<string, Array<StepRecord>>()
  const toolCalls = new Map<string, ToolCallRecord>()
  const parked = new Set<() => void>()
  const open = new Map<Socket, Set<StepRecord>>()
  let connections = 0

  const records = (clear: boolean): Records => {
    const out: Records = { turns: Object.fromEntries(turns), toolCalls: Object.fromEntries(toolCalls), connections }
    if (clear) {
      turns.clear()
      toolCalls.clear()
      connections = 0
    }
    return out
  }

  const answer = (req: IncomingMessage, res: ServerResponse, raw: string, arrived: number) => {
    let body: unknown
    try {
      body = JSON.parse(raw)
    } catch {
      body = undefined
    }
    const turn = parseTurn(body)
    if (turn === undefined) {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "no turn:<id>:<scenario> user message" } }))
      return
    }
    const steps = turns.get(turn.id) ?? []
    turns.set(turn.id, steps)
    const index = steps.length
    const [kind = "", arg = ""] = turn.scenario.split(":")

    const socket = req.socket
    const start = (label: string): StepRecord => {
      const record: StepRecord = { index, arrived, firstWrite: undefined, lastByte: undefined, closed: undefined, answer: label }
      steps.push(record)
      open.get(socket)?.add(record)
      return record
    }
    const finish = (record: StepRecord) => {
      record.lastByte = nowNs()
      open.get(socket)?.delete(record)
    }
    /** The whole response in one write; stamped when it was handed to the kernel. */
    const whole = (label: string, payload: string, status = 200, headers: Record<string, string> = sse) => {
      const record = start(label)
      res.writeHead(status, headers)
      res.end(payload, () => finish(record))
    }
    /** Text deltas `gapMs` apart (0: the first alone, the rest 5 ms later); `hold` parks, hangs or drops after the first. */
    const streamed = (label: string, pieces: ReadonlyArray<string>, options: { readonly gapMs: number; readonly hold?: "park" | "hang" | "drop" }) => {
      const record = start(label)
      res.writeHead(200, sse)
      res.write(chunk({ content: pieces[0] ?? "" }), () => {
        record.firstWrite ??= nowNs()
      })
      let sent = 1
      const endWithRest = () => {
        if (socket.destroyed) return
        res.end(textBody(pieces.slice(sent)), () => finish(record))
      }
      switch (options.hold) {
        case "hang":
          return
        case "drop":
          setTimeout(() => socket.destroy(), 5)
          return
        case "park":
          parked.add(endWithRest)
          return
      }
      if (options.gapMs <= 0) {
        setTimeout(endWithRest, 5)
        return
      }
      const next = () => {
        if (socket.destroyed) return
        if (sent >= pieces.length - 1) return endWithRest()
        res.write(chunk({ content: pieces[sent]! }))
        sent += 1
        setTimeout(next, options.gapMs)
      }
      setTimeout(next, options.gapMs)
    }

    switch (kind) {
      case "loop": {
        const n = Number(arg)
        if (index < n) return whole("echo", toolCallBody("echo", { text: `${turn.id}#${index}` }))
        return whole("text", textBody(deltas(finalText(turn.id, turn.echoes), 4)))
      }
      case "unknown": {
        const n = Number(arg)
        if (index < n) return whole("unknown", toolCallBody("no_such_tool", { step: index }))
        return whole("text", textBody(deltas(unknownToolText(turn.id, n), 4)))
      }
      case "ttft":
        return streamed("text", deltas(TTFT_TEXT, 4), { gapMs: 0 })
      case "park":
        if (index === 0) return whole("echo", toolCallBody("echo", { text: `${turn.id}#0` }))
        return streamed("text", deltas(finalText(turn.id, turn.echoes), 4), { gapMs: 0, hold: "park" })
      case "killstream":
        return streamed("text", ["The reply starts ", "and never ends."], { gapMs: 0, hold: "hang" })
      case "killtool":
        if (index === 0) return whole("fetch_slow", toolCallBody("fetch_slow", { id: turn.id, hang: true }))
        return whole("after-kill", textBody(["This request must never be made."]))
      case "hangtool":
        if (index === 0) return whole("never_tool", toolCallBody("never_tool", {}))
        return whole("text", textBody(deltas(CONTINUED_TEXT, 2)))
      case "parallel": {
        if (index === 0) {
          const record = start("parallel")
          const calls = PARALLEL_TOOLS.map((name, k) => ({ callId: `call_${++callCounter}`, name, fetchId: parallelFetchId(turn.id, k) }))
          record.calls = calls
          res.writeHead(200, sse)
          res.end(parallelCallsBody(calls.map((call) => ({ ...call, args: { id: call.fetchId, ms: Number(arg) } }))), () => finish(record))
          return
        }
        const record = start("text")
        record.results = turn.results
        record.assistantCallIds = turn.assistantCallIds
        const fetched = turn.results.flatMap((result) => (result.fetched === undefined ? [] : [result.fetched]))
        res.writeHead(200, sse)
        res.end(textBody(deltas(parallelText(turn.id, fetched), 4)), () => finish(record))
        return
      }
      case "plan": {
        const step = arg[index] ?? "t"
        switch (step) {
          case "e":
            return whole("echo", toolCallBody("echo", { text: `${turn.id}#${index}` }))
          case "f":
            return whole("fetch_slow", toolCallBody("fetch_slow", { id: `${turn.id}#${index}`, hang: false }))
          case "n":
            return whole("never_tool", toolCallBody("never_tool", {}))
          case "s":
            return streamed("stall", ["Thinking about it", "…"], { gapMs: 0, hold: "hang" })
          case "d":
            return streamed("drop", ["Dropped ", "connection"], { gapMs: 0, hold: "drop" })
          case "r":
            return whole("429", JSON.stringify({ error: { message: "Rate limit reached", type: "rate_limit" } }), 429, {
              "content-type": "application/json",
              "retry-after": "1"
            })
          case "x":
            return whole("500", JSON.stringify({ error: { message: "upstream exploded" } }), 500, { "content-type": "application/json" })
          case "l":
            return streamed("text", deltas(soakLongText(turn.id), 40), { gapMs: 15 })
          default:
            return streamed("text", deltas(soakText(turn.id), 6), { gapMs: 10 })
        }
      }
      default:
        res.writeHead(400, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: `unknown scenario ${turn.scenario}` } }))
    }
  }

  const model = createServer((req, res) => {
    const arrived = nowNs()
    const pieces: Array<Buffer> = []
    req.on("data", (piece: Buffer) => pieces.push(piece))
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      if (url.pathname === "/__records") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify(records(url.searchParams.get("clear") === "1")))
        return
      }
      if (url.pathname === "/__parked") {
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ parked: parked.size }))
        return
      }
      if (url.pathname === "/__release") {
        const all = [...parked]
        parked.clear()
        for (const release of all) release()
        res.writeHead(200, { "content-type": "application/json" })
        res.end(JSON.stringify({ released: all.length }))
        return
      }
      answer(req, res, Buffer.concat(pieces).toString("utf8"), arrived)
    })
  })
  model.keepAliveTimeout = 60_000
  model.on("connection", (socket: Socket) => {
    connections += 1
    open.set(socket, new Set())
    socket.on("close", () => {
      const at = nowNs()
      for (const record of open.get(socket) ?? []) record.closed ??= at
      open.delete(socket)
    })
  })

  // The tool server: `/slow/<id>?hang=1` never answers; otherwise answers after `?ms=` (default 5 ms).
  const tool = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1")
    const id = decodeURIComponent(url.pathname.replace(/^\/slow\//, ""))
    const record: ToolCallRecord = { arrived: nowNs(), closed: undefined }
    toolCalls.set(id, record)
    const delayMs = Math.min(60_000, Math.max(0, Number(url.searchParams.get("ms") ?? 5) || 0))
    const timer = url.searchParams.get("hang") === "1" ? undefined : setTimeout(() => {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ fetched: id }), () => (record.answered = nowNs()))
    }, delayMs)
    // Per response, not per socket: keep-alive sockets serve many requests.
    res.once("close", () => {
      clearTimeout(timer)
      if (!res.writableFinished) record.closed = nowNs()
    })
  })
  tool.keepAliveTimeout = 60_000

  const listen = (server: typeof model) =>
    new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)))
  const modelPort = await listen(model)
  const toolPort = await listen(tool)
  return {
    modelPort,
    toolPort,
    close: () =>
      new Promise<void>((resolve) => {
        model.closeAllConnections()
        tool.closeAllConnections()
        model.close(() => tool.close(() => resolve()))
      })
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))

if (isMain) {
  const server = await startLoopServer()
  process.stdout.write(`PORTS ${server.modelPort} ${server.toolPort}\n`)
  process.stdin.resume()
  process.stdin.on("end", () => {
    void server.close().then(() => process.exit(0))
  })
}
