import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

/** A tool a test MCP server offers: a raw JSON schema (so `format: uri` etc. are exact) and a handler. */
export interface TestTool {
  readonly name: string
  readonly description?: string
  readonly inputSchema?: Record<string, unknown>
  readonly run: (args: Record<string, unknown>, signal: AbortSignal) => Promise<CallToolResult>
}

/** What a test server saw, for assertions made from the server's side of the wire. */
export interface ServerLog {
  /** `initialize` requests received (one per new session / connect). */
  initializes: number
  readonly toolCalls: Array<{ readonly name: string; readonly args: Record<string, unknown> }>
  /** Calls whose handler saw `notifications/cancelled` (the SDK aborted the handler's signal). */
  cancelledCalls: number
  /** Calls that finished (returned a result). */
  finishedCalls: number
  /** Every HTTP request: method, path and headers (lower-case names). */
  readonly requests: Array<{ readonly method: string; readonly path: string; readonly headers: Readonly<Record<string, string>> }>
  /** `tools/call` POSTs whose HTTP response was closed by the client before it was complete. */
  closedCallRequests: number
  /** Any request whose response the client closed before it was complete. */
  abandonedRequests: number
}

export const newServerLog = (): ServerLog => ({
  initializes: 0,
  toolCalls: [],
  cancelledCalls: 0,
  finishedCalls: 0,
  requests: [],
  closedCallRequests: 0,
  abandonedRequests: 0
})

export const text = (value: string): CallToolResult => ({ content: [{ type: "text", text: value }] })

/** A low-level SDK Server exposing `tools` and recording into `log`. */
export const makeToolServer = (tools: ReadonlyArray<TestTool>, log: ServerLog): Server => {
  const server = new Server({ name: "loopcord-test-server", version: "1.0.0" }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description ?? `Test tool ${tool.name}`,
      inputSchema: { type: "object" as const, properties: {}, ...tool.inputSchema }
    }))
  }))
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {}
    log.toolCalls.push({ name: request.params.name, args })
    const tool = tools.find((candidate) => candidate.name === request.params.name)
    if (tool === undefined) return { content: [{ type: "text", text: `unknown tool ${request.params.name}` }], isError: true }
    extra.signal.addEventListener("abort", () => {
      log.cancelledCalls++
    })
    try {
      const result = await tool.run(args, extra.signal)
      log.finishedCalls++
      return result
    } catch (error) {
      return { content: [{ type: "text", text: error instanceof Error ? error.message : String(error) }], isError: true }
    }
  })
  return server
}

/** Resolves after `ms` real milliseconds, or rejects when `signal` aborts. */
export const sleepUnlessAborted = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms)
    timer.unref()
    signal.addEventListener("abort", () => {
      clearTimeout(timer)
      reject(new Error("aborted"))
    })
  })

/** Tools most tests need. */
export const standardTools: ReadonlyArray<TestTool> = [
  {
    name: "echo",
    description: "Echoes its text",
    inputSchema: { properties: { text: { type: "string" } }, required: ["text"] },
    run: async (args) => text(`echo: ${String(args["text"])}`)
  },
  {
    name: "add_numbers",
    description: "Adds two numbers",
    inputSchema: { properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    run: async (args) => text(`The sum of ${String(args["a"])} and ${String(args["b"])} is ${Number(args["a"]) + Number(args["b"])}.`)
  },
  {
    name: "explode",
    description: "Always reports an error",
    run: async () => ({ content: [{ type: "text", text: "kaboom" }, { type: "text", text: "the tool broke" }], isError: true })
  },
  {
    name: "structured",
    description: "Returns structured content only",
    run: async () => ({ content: [], structuredContent: { temperature: 21, unit: "C" } })
  },
  {
    name: "slow",
    description: "Waits a long time (real time) unless cancelled",
    run: async (_args, signal) => {
      await sleepUnlessAborted(60_000, signal)
      return text("slow done")
    }
  }
]

/** The standard tools renamed `${prefix}name`, so several servers can be registered side by side. */
export const prefixedTools = (prefix: string): ReadonlyArray<TestTool> =>
  standardTools.map((tool) => ({ ...tool, name: `${prefix}${tool.name}` }))
