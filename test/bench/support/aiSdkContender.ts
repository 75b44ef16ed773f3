/**
 * The Vercel AI SDK as a contender, used idiomatically: `ai` 7 `streamText` with
 * `@ai-sdk/openai-compatible` 3, zod tool schemas, `stopWhen: stepCountIs(cap)`, retries off,
 * the whole `fullStream` consumed. Kill = abort the `abortSignal` given to streamText (which
 * the SDK hands to tools). A per-tool timeout does not exist; the closest setting,
 * `timeout.stepMs`, is used when a contender timeout is asked for.
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { stepCountIs, streamText, tool, type ToolSet } from "ai"
import { z } from "zod"
import {
  API_KEY,
  type Contender,
  type ContenderOptions,
  fetchSlow,
  MODEL,
  neverSettles,
  nowNs,
  slowLookup,
  type SlowToolName,
  slowToolNames,
  SYSTEM_PROMPT,
  toolDescriptions,
  type TurnOutcome
} from "./contender"

export const makeAiSdk = (options: ContenderOptions): Promise<Contender> => {
  const provider = createOpenAICompatible({ name: "bench", baseURL: options.baseUrl, apiKey: API_KEY, includeUsage: true })
  const all: ToolSet = {
    echo: tool({
      description: toolDescriptions.echo,
      inputSchema: z.object({ text: z.string() }),
      execute: async ({ text }) => ({ echoed: text })
    }),
    fetch_slow: tool({
      description: toolDescriptions.fetch_slow,
      inputSchema: z.object({ id: z.string(), hang: z.boolean() }),
      execute: (args, { abortSignal }) => fetchSlow(options.toolUrl, args, abortSignal)
    }),
    never_tool: tool({
      description: toolDescriptions.never_tool,
      inputSchema: z.object({}),
      execute: (): Promise<{ readonly never: true }> => neverSettles()
    }),
    ...Object.fromEntries(slowToolNames.map((name: SlowToolName) => [
      name,
      tool({
        description: toolDescriptions[name],
        inputSchema: z.object({ id: z.string(), ms: z.number() }),
        execute: (args, { abortSignal }) => slowLookup(options.toolUrl, args, abortSignal)
      })
    ]))
  }
  const tools: ToolSet = Object.fromEntries(options.tools.map((name) => [name, all[name]!]))

  return Promise.resolve({
    name: "AI SDK",
    start: (message) => {
      const controller = new AbortController()
      let first: number | undefined
      const done = (async (): Promise<TurnOutcome> => {
        const result = streamText({
          model: provider(MODEL),
          system: SYSTEM_PROMPT,
          messages: [{ role: "user", content: message }],
          tools,
          stopWhen: stepCountIs(options.maxSteps),
          maxRetries: 0,
          abortSignal: controller.signal,
          ...(options.toolTimeoutMs === undefined ? {} : { timeout: { stepMs: options.toolTimeoutMs } })
        })
        const parts: Array<string> = []
        let status = "completed"
        try {
          for await (const part of result.fullStream) {
            if (part.type === "text-delta") {
              first ??= nowNs()
              parts.push(part.text)
            } else if (part.type === "error") status = "error"
            else if (part.type === "abort") status = "aborted"
          }
        } catch {
          status = controller.signal.aborted ? "aborted" : "error"
        }
        return { text: parts.join(""), status }
      })()
      return { done, kill: () => controller.abort(), firstDeltaAt: () => first }
    },
    close: () => Promise.resolve()
  })
}
