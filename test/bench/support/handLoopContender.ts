/**
 * The floor: a minimal hand-written tool loop with no framework. undici `request`, JSON, an SSE
 * line splitter, tool calls accumulated by index, the echo result pushed back as a `tool`
 * message, the same step cap. A tool call races the tool against the kill signal and, when a
 * timeout is asked for, a timer. It does nothing loopcord's loop does beyond that (no typed
 * outcomes, no stop registry, no fallback, no argument repair): it shows what the wire costs.
 */
import { request } from "undici"
import {
  API_KEY,
  type BenchToolName,
  type Contender,
  type ContenderOptions,
  fetchSlow,
  MODEL,
  neverSettles,
  nowNs,
  slowLookup,
  SYSTEM_PROMPT,
  toolDescriptions,
  type TurnOutcome
} from "./contender"

const slowParameters = {
  type: "object",
  properties: { id: { type: "string" }, ms: { type: "number" } },
  required: ["id", "ms"],
  additionalProperties: false
}

const parameters: Record<BenchToolName, Record<string, unknown>> = {
  echo: { type: "object", properties: { text: { type: "string" } }, required: ["text"], additionalProperties: false },
  fetch_slow: {
    type: "object",
    properties: { id: { type: "string" }, hang: { type: "boolean" } },
    required: ["id", "hang"],
    additionalProperties: false
  },
  never_tool: { type: "object", properties: {}, required: [], additionalProperties: false },
  slow_a: slowParameters,
  slow_b: slowParameters,
  slow_c: slowParameters
}

interface Call {
  id: string
  name: string
  args: string
}

type Message = Record<string, unknown>

class Killed extends Error {}

export const makeHandLoop = (options: ContenderOptions): Promise<Contender> => {
  const url = `${options.baseUrl}/chat/completions`
  const declarations = options.tools.map((name) => ({
    type: "function",
    function: { name, description: toolDescriptions[name], parameters: parameters[name] }
  }))

  const runTool = (call: Call, signal: AbortSignal): Promise<unknown> => {
    const args = JSON.parse(call.args.length === 0 ? "{}" : call.args) as Record<string, unknown>
    switch (call.name) {
      case "echo":
        if (typeof args.text !== "string") return Promise.resolve({ error: "text must be a string" })
        return Promise.resolve({ echoed: args.text })
      case "fetch_slow":
        return fetchSlow(options.toolUrl, { id: String(args.id), hang: args.hang === true }, signal)
      case "never_tool":
        return neverSettles()
      case "slow_a":
      case "slow_b":
      case "slow_c":
        return slowLookup(options.toolUrl, { id: String(args.id), ms: Number(args.ms) }, signal)
      default:
        return Promise.resolve({ error: `unknown tool ${call.name}` })
    }
  }

  /** The tool vs the kill vs the timeout; the timer is cleared whoever wins. */
  const race = (call: Call, signal: AbortSignal): Promise<unknown> => {
    let timer: NodeJS.Timeout | undefined
    let onAbort: (() => void) | undefined
    const contenders: Array<Promise<unknown>> = [
      runTool(call, signal),
      new Promise((_, reject) => {
        onAbort = () => reject(new Killed())
        signal.addEventListener("abort", onAbort, { once: true })
      })
    ]
    if (options.toolTimeoutMs !== undefined) {
      const ms = options.toolTimeoutMs
      contenders.push(new Promise((resolve) => (timer = setTimeout(() => resolve({ error: `timed out after ${ms} ms` }), ms))))
    }
    return Promise.race(contenders).finally(() => {
      if (timer !== undefined) clearTimeout(timer)
      if (onAbort !== undefined) signal.removeEventListener("abort", onAbort)
    })
  }

  /** One streamed model call: text deltas go to `onText`; the first tool call (if any) is returned. */
  const pass = async (messages: ReadonlyArray<Message>, signal: AbortSignal, onText: (text: string) => void): Promise<Call | undefined> => {
    const response = await request(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}`, accept: "text/event-stream" },
      body: JSON.stringify({
        model: MODEL,
        messages,
        tools: declarations,
        stream: true,
        stream_options: { include_usage: true }
      }),
      signal
    })
    if (response.statusCode !== 200) {
      const body = await response.body.text()
      throw new Error(`HTTP ${response.statusCode}: ${body.slice(0, 200)}`)
    }
    const calls = new Map<number, Call>()
    let buffer = ""
    response.body.setEncoding("utf8")
    for await (const piece of response.body as AsyncIterable<string>) {
      buffer += piece
      let newline: number
      while ((newline = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, newline).trimEnd()
        buffer = buffer.slice(newline + 1)
        if (!line.startsWith("data:")) continue
        const data = line.slice(5).trim()
        if (data === "[DONE]") continue
        const chunk = JSON.parse(data) as {
          choices?: Array<{ delta?: { content?: string | null; tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }> } }>
        }
        const delta = chunk.choices?.[0]?.delta
        if (delta === undefined) continue
        if (typeof delta.content === "string" && delta.content.length > 0) onText(delta.content)
        for (const fragment of delta.tool_calls ?? []) {
          const index = fragment.index ?? 0
          const call = calls.get(index) ?? { id: "", name: "", args: "" }
          calls.set(index, call)
          if (fragment.id !== undefined) call.id = fragment.id
          call.name += fragment.function?.name ?? ""
          call.args += fragment.function?.arguments ?? ""
        }
      }
    }
    return calls.get(0) ?? [...calls.values()][0]
  }

  return Promise.resolve({
    name: "hand-written",
    start: (message) => {
      const controller = new AbortController()
      let first: number | undefined
      const parts: Array<string> = []
      const onText = (text: string) => {
        first ??= nowNs()
        parts.push(text)
      }
      const done = (async (): Promise<TurnOutcome> => {
        const messages: Array<Message> = [{ role: "system", content: SYSTEM_PROMPT }, { role: "user", content: message }]
        try {
          for (let step = 0; step < options.maxSteps; step += 1) {
            const call = await pass(messages, controller.signal, onText)
            if (call === undefined) return { text: parts.join(""), status: "completed" }
            const result = await race(call, controller.signal)
            messages.push(
              { role: "assistant", content: null, tool_calls: [{ id: call.id, type: "function", function: { name: call.name, arguments: call.args } }] },
              { role: "tool", tool_call_id: call.id, content: JSON.stringify(result) }
            )
          }
          return { text: parts.join(""), status: "step_cap" }
        } catch (error) {
          return { text: parts.join(""), status: controller.signal.aborted ? "aborted" : `error: ${String(error)}` }
        }
      })()
      return { done, kill: () => controller.abort(), firstDeltaAt: () => first }
    },
    close: () => Promise.resolve()
  })
}
