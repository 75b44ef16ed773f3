import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from "node:http"
import { createServer as createTcpServer } from "node:net"
import type { AddressInfo } from "node:net"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { makeToolServer, newServerLog, type ServerLog, standardTools, type TestTool } from "./testTools"

/**
 * Real MCP servers built with the SDK, on 127.0.0.1 with ephemeral ports, plus the faulty
 * endpoints the resilience tests need. Each records what it saw (`log`) for assertions made
 * from the server's side of the wire.
 */
export interface TestHttpServer {
  readonly url: string
  readonly port: number
  readonly log: ServerLog
  readonly close: () => Promise<void>
}

export interface StreamableTestServer extends TestHttpServer {
  /** Simulates a restart: every session is dropped, old session ids get 404 from now on. */
  readonly forgetSessions: () => Promise<void>
  /** Live sessions. */
  readonly sessionCount: () => number
}

const listen = (server: HttpServer): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })

const closeServer = (server: HttpServer): Promise<void> =>
  new Promise((resolve) => {
    server.closeAllConnections()
    server.close(() => resolve())
  })

const readBody = async (req: IncomingMessage): Promise<unknown> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const raw = Buffer.concat(chunks).toString("utf8")
  return raw === "" ? undefined : JSON.parse(raw)
}

const lowerHeaders = (req: IncomingMessage): Record<string, string> =>
  Object.fromEntries(Object.entries(req.headers).map(([name, value]) => [name.toLowerCase(), Array.isArray(value) ? value.join(", ") : value ?? ""]))

const record = (log: ServerLog, req: IncomingMessage, res: ServerResponse) => {
  log.requests.push({ method: req.method ?? "", path: req.url ?? "", headers: lowerHeaders(req) })
  res.on("close", () => {
    if (!res.writableFinished) log.abandonedRequests++
  })
}

const messages = (body: unknown): ReadonlyArray<Record<string, unknown>> =>
  (Array.isArray(body) ? body : [body]).filter((entry): entry is Record<string, unknown> => typeof entry === "object" && entry !== null)

/** Counts initializes and watches `tools/call` POSTs for an early close by the client. */
const observe = (log: ServerLog, body: unknown, res: ServerResponse) => {
  for (const message of messages(body)) {
    if (message["method"] === "initialize") log.initializes++
    if (message["method"] === "tools/call") {
      res.on("close", () => {
        if (!res.writableFinished) log.closedCallRequests++
      })
    }
  }
}

const jsonError = (res: ServerResponse, status: number, message: string) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }))
}

/** A stateful Streamable HTTP server (sessions) at `/mcp`; GET/DELETE follow the session. */
export const startStreamableServer = async (
  options: {
    readonly tools?: ReadonlyArray<TestTool>
    readonly path?: string
    /** Awaited before any request is handled (a server that is slow to come up). */
    readonly beforeHandle?: () => Promise<void>
  } = {}
): Promise<StreamableTestServer> => {
  const path = options.path ?? "/mcp"
  const tools = options.tools ?? standardTools
  const log = newServerLog()
  const sessions = new Map<string, StreamableHTTPServerTransport>()

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    record(log, req, res)
    await options.beforeHandle?.()
    if (new URL(req.url ?? "/", "http://x").pathname !== path) return jsonError(res, 404, "not found")
    const sessionId = req.headers["mcp-session-id"]
    const known = typeof sessionId === "string" ? sessions.get(sessionId) : undefined
    if (req.method === "POST") {
      const body = await readBody(req)
      observe(log, body, res)
      if (known !== undefined) return known.handleRequest(req, res, body)
      if (typeof sessionId === "string") return jsonError(res, 404, "Session not found")
      if (!isInitializeRequest(body)) return jsonError(res, 400, "No session")
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport)
        }
      })
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      }
      await makeToolServer(tools, log).connect(transport)
      return transport.handleRequest(req, res, body)
    }
    if (known !== undefined) return known.handleRequest(req, res)
    return jsonError(res, typeof sessionId === "string" ? 404 : 400, "No session")
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) jsonError(res, 500, String(error))
    })
  })
  const port = await listen(server)
  const forgetSessions = async () => {
    const open = [...sessions.values()]
    sessions.clear()
    await Promise.allSettled(open.map((transport) => transport.close()))
  }
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    log,
    forgetSessions,
    sessionCount: () => sessions.size,
    close: async () => {
      await forgetSessions()
      await closeServer(server)
    }
  }
}

/**
 * A legacy SSE-only server: GET `/sse` opens the stream, POST `/messages?sessionId=` carries
 * requests, and a POST to `/sse` (a Streamable HTTP attempt) is answered 405.
 */
export const startSseServer = async (options: { readonly tools?: ReadonlyArray<TestTool> } = {}): Promise<TestHttpServer> => {
  const tools = options.tools ?? standardTools
  const log = newServerLog()
  const sessions = new Map<string, SSEServerTransport>()

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    record(log, req, res)
    const url = new URL(req.url ?? "/", "http://x")
    if (url.pathname === "/sse" && req.method === "GET") {
      const transport = new SSEServerTransport("/messages", res)
      sessions.set(transport.sessionId, transport)
      res.on("close", () => sessions.delete(transport.sessionId))
      await makeToolServer(tools, log).connect(transport)
      return
    }
    if (url.pathname === "/messages" && req.method === "POST") {
      const transport = sessions.get(url.searchParams.get("sessionId") ?? "")
      const body = await readBody(req)
      observe(log, body, res)
      if (transport === undefined) return jsonError(res, 404, "Session not found")
      return transport.handlePostMessage(req, res, body)
    }
    res.writeHead(url.pathname === "/sse" ? 405 : 404, { allow: "GET" }).end()
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) jsonError(res, 500, String(error))
    })
  })
  const port = await listen(server)
  return {
    url: `http://127.0.0.1:${port}/sse`,
    port,
    log,
    close: async () => {
      await Promise.allSettled([...sessions.values()].map((transport) => transport.close()))
      await closeServer(server)
    }
  }
}

/**
 * Accepts connections and never completes the MCP handshake: POSTs hang (or get
 * `postStatus`, e.g. 405 to push the client to SSE) and a GET opens an SSE stream that never
 * sends its `endpoint` event.
 */
export const startHangingServer = async (options: { readonly postStatus?: number } = {}): Promise<TestHttpServer> => {
  const log = newServerLog()
  const server = createServer((req, res) => {
    record(log, req, res)
    if (req.method === "POST" && options.postStatus !== undefined) {
      res.writeHead(options.postStatus).end()
      return
    }
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      res.write(": waiting forever\n\n")
    }
    // Otherwise: never answer.
  })
  const port = await listen(server)
  return { url: `http://127.0.0.1:${port}/mcp`, port, log, close: () => closeServer(server) }
}

/** A TCP listener that drops every connection at once, counting them: a server that is "down". */
export const startDroppingServer = async (): Promise<{ readonly url: string; readonly connections: () => number; readonly close: () => Promise<void> }> => {
  let connections = 0
  const server = createTcpServer((socket) => {
    connections++
    socket.destroy()
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
}

/** A loopback URL whose port has nothing listening (connection refused). */
export const deadPortUrl = async (): Promise<string> => {
  const server = createServer()
  const port = await listen(server)
  await closeServer(server)
  return `http://127.0.0.1:${port}/mcp`
}

/** Answers every request with a redirect to `location` (the guarded fetch must not follow it). */
export const startRedirectServer = async (location: string, status = 307): Promise<TestHttpServer> => {
  const log = newServerLog()
  const server = createServer((req, res) => {
    record(log, req, res)
    res.writeHead(status, { location }).end()
  })
  const port = await listen(server)
  return { url: `http://127.0.0.1:${port}/mcp`, port, log, close: () => closeServer(server) }
}
