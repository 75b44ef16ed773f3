import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { makeToolServer, newServerLog, type ServerLog, standardTools, type TestTool } from "./testTools"

/**
 * A loopback fake of Smithery Connect (api.smithery.ai): `GET/POST /namespaces`,
 * `PUT /connect/{namespace}/{connectionId}` (upsert a connection to an upstream `mcpUrl`) and
 * the stateless Streamable HTTP endpoint `/connect/{namespace}/{connectionId}/mcp`, which here
 * serves `tools` itself instead of relaying. Every request must carry `Bearer <apiKey>`.
 */
export interface FakeSmithery {
  readonly baseUrl: string
  readonly log: ServerLog
  readonly upserts: Array<{ readonly path: string; readonly body: Record<string, unknown> }>
  readonly close: () => Promise<void>
}

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks).toString("utf8")
  return raw === "" ? undefined : JSON.parse(raw)
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export const startFakeSmithery = async (options: {
  readonly apiKey: string
  readonly namespaces?: ReadonlyArray<string>
  /** Answer every connection upsert with this status (e.g. 500) instead of accepting it. */
  readonly upsertStatus?: number
  readonly tools?: ReadonlyArray<TestTool>
}): Promise<FakeSmithery> => {
  const log = newServerLog()
  const upserts: Array<{ path: string; body: Record<string, unknown> }> = []
  const connections = new Set<string>()
  const namespaces = [...(options.namespaces ?? ["loopcord-ns"])]

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    log.requests.push({
      method: req.method ?? "",
      path: req.url ?? "",
      headers: Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name, String(value)]))
    })
    if (req.headers.authorization !== `Bearer ${options.apiKey}`) return json(res, 401, { error: "unauthorized" })
    const path = new URL(req.url ?? "/", "http://x").pathname
    if (path === "/namespaces" && req.method === "GET") return json(res, 200, { namespaces: namespaces.map((name) => ({ name })) })
    if (path === "/namespaces" && req.method === "POST") {
      namespaces.push("created-ns")
      return json(res, 201, { name: "created-ns" })
    }
    const connection = /^\/connect\/([^/]+)\/([^/]+)$/.exec(path)
    if (connection !== null && req.method === "PUT") {
      const body = (await readBody(req)) as Record<string, unknown>
      upserts.push({ path, body })
      if (options.upsertStatus !== undefined) return json(res, options.upsertStatus, { error: "upstream unavailable" })
      connections.add(path)
      return json(res, 200, { connectionId: connection[2], mcpUrl: body["mcpUrl"], status: { state: "connected" } })
    }
    const mcp = /^(\/connect\/[^/]+\/[^/]+)\/mcp$/.exec(path)
    if (mcp !== null && mcp[1] !== undefined && connections.has(mcp[1])) {
      if (req.method !== "POST") return json(res, 405, { error: "method not allowed" })
      const body = await readBody(req)
      for (const message of Array.isArray(body) ? body : [body]) {
        if (typeof message === "object" && message !== null && "method" in message && message.method === "initialize") log.initializes++
      }
      const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true }) // stateless: no session ids
      const server = makeToolServer(options.tools ?? standardTools, log)
      res.on("close", () => {
        void transport.close()
        void server.close()
      })
      await server.connect(transport)
      return transport.handleRequest(req, res, body)
    }
    return json(res, 404, { error: "not found" })
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) json(res, 500, { error: String(error) })
    })
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    log,
    upserts,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
