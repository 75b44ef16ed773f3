// A one-shot AI SDK program, the start-up contender of startup.bench.ts: what a minimal
// `streamText` CLI does in a fresh process. `ai` 7 + `@ai-sdk/openai-compatible` 3, one tool
// declared (so tool calls are parsed), the whole fullStream consumed, one JSON line printed.
// Plain JavaScript, like loopcord's compiled dist/: neither pays for a TypeScript loader.
//
//   node aiSdkOnce.mjs <baseUrl> <message>
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { stepCountIs, streamText, tool } from "ai"
import { z } from "zod"

const [baseUrl, message] = process.argv.slice(2)
const provider = createOpenAICompatible({ name: "bench", baseURL: baseUrl, apiKey: "bench-key", includeUsage: true })
const result = streamText({
  model: provider("bench-model"),
  system: "You are a benchmark. Call the tools you are asked to call.",
  messages: [{ role: "user", content: message }],
  tools: { echo: tool({ description: "Echoes the text back", inputSchema: z.object({ text: z.string() }), execute: async ({ text }) => ({ echoed: text }) }) },
  stopWhen: stepCountIs(100),
  maxRetries: 0
})
let text = ""
let status = "completed"
for await (const part of result.fullStream) {
  if (part.type === "text-delta") text += part.text
  else if (part.type === "error") status = "error"
}
process.stdout.write(`${JSON.stringify({ status, text })}\n`)
