import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A hostile guild MCP server on 127.0.0.1 (issue 12 "bad input"), speaking plain Streamable
 * HTTP with JSON responses (a valid MCP wire format), written by hand so pages of any size can
 * be streamed without building them in memory first:
 *
 * - `hugePages`: every `tools/list` page is about 7.6 MiB (26 500 tools), the cursor never ends;
 * - `nearCapPages`: pages just under 2 MiB (8 000 tools each) for 125 pages: a million tools;
 * - `endlessCursor`: one tool per page, the cursor never ends;
 * - `schemas`: one page (1.6 MiB) with a 20 000-level schema (deep enough to overflow any
 *   recursive walk), a 300 KiB schema, 20 tools with 20 KiB schemas, a 100 KiB description, a
 *   100 KiB name and two well-behaved tools;
 * - every mode answers `tools/call` of `flood` with 7 MiB of text;
 * - `echoPathOnCall`: one tool, `leak`, whose call is answered HTTP 500 with the request's path
 *   and query in the body (as a careless service's error page would); `echoPathAlways`: every
 *   POST is answered that way (the server never connects).
 */
export type HostileMode = "hugePages" | "nearCapPages" | "endlessCursor" | "schemas" | "echoPathOnCall" | "echoPathAlways"

export interface HostileServer {
  readonly url: string
  readonly port: number
  /** `tools/list` requests answered. */
  readonly pagesServed: () => number
  /** Bytes of `tools/list` answers written (or attempted before the client hung up). */
  readonly bytesServed: () => number
  readonly close: () => Promise<void>
}

const filler = (length: number, seed: string): string => seed.repeat(Math.ceil(length / seed.length)).slice(0, length)

const plainTool = (name: string, descriptionChars = 190): string =>
  JSON.stringify({ name, description: filler(descriptionChars, "hostile "), inputSchema: { type: "object", properties: { q: { type: "string" } } } })

/** A schema nested `depth` levels deep, as text (JSON.stringify of it would overflow the stack). */
const deepSchema = (depth: number): string =>
  `{"type":"object","properties":{"deep":${'{"type":"object","properties":{"x":'.repeat(depth)}{"type":"string"}${"}}".repeat(depth)}}}`

/** The `tools` array elements and the next cursor of page `page` (0-based). */
const pageOf = (mode: HostileMode, page: number): { readonly tools: () => Iterable<string>; readonly next: string | undefined } => {
  switch (mode) {
    case "hugePages":
      return {
        tools: function*() {
          for (let index = 0; index < 26_500; index++) yield plainTool(`huge_${page}_${index}`)
        },
        next: `page-${page + 1}`
      }
    case "nearCapPages":
      return {
        tools: function*() {
          for (let index = 0; index < 8_000; index++) yield plainTool(`many_${page}_${index}`, 120)
        },
        next: page + 1 < 125 ? `page-${page + 1}` : undefined
      }
    case "endlessCursor":
      return { tools: () => [plainTool(`endless_${page}`)], next: `again-${page + 1}` }
    case "echoPathOnCall":
    case "echoPathAlways":
      return { tools: () => [plainTool("leak")], next: undefined }
    case "schemas":
      return {
        tools: function*() {
          yield `{"name":"deep","description":"deep schema","inputSchema":${deepSchema(20_000)}}`
          yield JSON.stringify({
            name: "wide",
            description: "huge schema",
            inputSchema: { type: "object", properties: { blob: { type: "string", description: filler(300 * 1024, "wide ") } } }
          })
          for (let index = 0; index < 20; index++) {
            yield JSON.stringify({ name: `fat_${index}`, inputSchema: { type: "object", properties: { x: { type: "string", description: filler(20 * 1024, "f") } } } })
          }
          yield JSON.stringify({ name: "verbose", description: filler(100 * 1024, "talk "), inputSchema: { type: "object" } })
          yield JSON.stringify({ name: filler(100 * 1024, "n"), inputSchema: { type: "object" } })
          yield plainTool("ok_one")
          yield JSON.stringify({ name: "flood", description: "answers 7 MiB", inputSchema: { type: "object" } })
        },
        next: undefined
      }
  }
}

const readBody = async (req: IncomingMessage): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString("utf8")
}

/** Writes `parts` with backpressure; stops when the client hangs up. */
const writeAll = async (res: ServerResponse, parts: Iterable<string>, count: (bytes: number) => void): Promise<void> => {
  for (const part of parts) {
    if (res.destroyed) return
    count(Buffer.byteLength(part))
    if (!res.write(part)) {
      await new Promise<void>((resolve) => {
        const resume = () => {
          res.off("drain", resume)
          res.off("close", resume)
          resolve()
        }
        res.on("drain", resume)
        res.on("close", resume)
      })
    }
  }
  if (!res.destroyed) res.end()
}

export const startHostileServer = async (mode: HostileMode): Promise<HostileServer> => {
  let pages = 0
  let bytes = 0
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end()
      return
    }
    const message = JSON.parse(await readBody(req)) as { id?: number | string; method?: string; params?: { cursor?: string; name?: string; protocolVersion?: string } }
    if (message.id === undefined) {
      res.writeHead(202).end()
      return
    }
    const id = JSON.stringify(message.id)
    const json = { "content-type": "application/json" }
    if (mode === "echoPathAlways" || (mode === "echoPathOnCall" && message.method === "tools/call")) {
      res.writeHead(500, { "content-type": "text/plain" }).end(`internal error while serving ${req.url ?? ""} (host ${req.headers.host ?? ""})`)
      return
    }
    if (message.method === "initialize") {
      res.writeHead(200, json).end(
        `{"jsonrpc":"2.0","id":${id},"result":{"protocolVersion":${JSON.stringify(message.params?.protocolVersion ?? "2025-06-18")},"capabilities":{"tools":{}},"serverInfo":{"name":"hostile","version":"1.0.0"}}}`
      )
      return
    }
    if (message.method === "tools/list") {
      const page = Number(/(\d+)$/.exec(message.params?.cursor ?? "")?.[1] ?? 0)
      const { next, tools } = pageOf(mode, page)
      pages++
      res.writeHead(200, json)
      const separated = function*() {
        yield `{"jsonrpc":"2.0","id":${id},"result":{${next === undefined ? "" : `"nextCursor":${JSON.stringify(next)},`}"tools":[`
        let first = true
        for (const tool of tools()) {
          yield first ? tool : `,${tool}`
          first = false
        }
        yield "]}}"
      }
      await writeAll(res, separated(), (written) => {
        bytes += written
      })
      return
    }
    if (message.method === "tools/call") {
      res.writeHead(200, json).end(
        `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":${JSON.stringify(filler(7 * 1024 * 1024, "flood "))}}]}}`
      )
      return
    }
    res.writeHead(200, json).end(`{"jsonrpc":"2.0","id":${id},"error":{"code":-32601,"message":"method not found"}}`)
  }
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy())
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    pagesServed: () => pages,
    bytesServed: () => bytes,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
