/**
 * Provider stream consumption: loopcord's OpenAiCompatible layer versus the Vercel AI SDK
 * (`ai` 7 `streamText` + `@ai-sdk/openai-compatible` 3), both reading the same loopback
 * Chat Completions SSE server (its own process, so `process.cpuUsage()` measures the client
 * only) to the last event, on 1k, 10k and 50k text deltas. Both must rebuild the exact text
 * before any timing counts. Contenders alternate per repetition after a warm-up.
 *
 * Prints a Markdown section on stdout (collected by `npm run bench`).
 */
import { createOpenAICompatible } from "@ai-sdk/openai-compatible"
import { streamText } from "ai"
import { Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import { spawn } from "node:child_process"
import { cpus } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import { LanguageModel } from "../../src/provider/LanguageModel"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { providerHttpClient } from "../../src/provider/providerHttpClient"
import { benchText } from "../support/fakeProviders/serveOpenAiText"

const here = dirname(fileURLToPath(import.meta.url))
const sizes = [1_000, 10_000, 50_000] as const
const warmups = 5
const repetitions: Record<number, number> = { 1_000: 15, 10_000: 7, 50_000: 5 }
const rewarmDeltas = 100

interface Sample {
  readonly cpuMs: number
  readonly wallMs: number
}

const startServer = () =>
  new Promise<{ readonly port: number; readonly stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", join(here, "../support/fakeProviders/serveOpenAiText.ts")], {
      stdio: ["pipe", "pipe", "inherit"]
    })
    let output = ""
    child.stdout.on("data", (piece: Buffer) => {
      output += piece.toString("utf8")
      const match = /PORT (\d+)/.exec(output)
      if (match !== null) resolve({ port: Number(match[1]), stop: () => child.stdin.end() })
    })
    child.on("exit", (code) => reject(new Error(`fake server exited with ${code}`)))
  })

/**
 * One measured run. The other contender's garbage is collected first (a forced GC), then a
 * short unmeasured run re-warms this contender: a full GC leaves ~10 ms of follow-up work that
 * would otherwise be charged to whoever runs next.
 */
const measure = async (run: (deltas: number) => Promise<string>, deltas: number, expected: string): Promise<Sample> => {
  ;(globalThis as { gc?: () => void }).gc?.()
  await run(rewarmDeltas)
  const cpuBefore = process.cpuUsage()
  const wallBefore = process.hrtime.bigint()
  const text = await run(deltas)
  const wallMs = Number(process.hrtime.bigint() - wallBefore) / 1e6
  const cpu = process.cpuUsage(cpuBefore)
  if (text !== expected) throw new Error(`wrong text: ${text.length} chars, expected ${expected.length}`)
  return { cpuMs: (cpu.user + cpu.system) / 1000, wallMs }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

const main = async () => {
  const server = await startServer()
  const baseUrl = `http://127.0.0.1:${server.port}/v1`

  // loopcord: the provider Layer over the app's provider client (platform undici), built once.
  const runtime = ManagedRuntime.make(Layer.provide(OpenAiCompatible.layer({ baseUrl }), providerHttpClient()))
  const model = await runtime.runPromise(LanguageModel)
  const loopcord = (deltas: number) => {
    const request: GenerationRequest = {
      model: `deltas-${deltas}`,
      apiKey: Redacted.make("bench"),
      system: "",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
      functionHistory: []
    }
    return runtime.runPromise(
      model.stream(request).pipe(
        Stream.runFold(() => [] as Array<string>, (parts, event) => {
          if (event._tag === "TextDelta") parts.push(event.text)
          return parts
        }),
        Effect.map((parts) => parts.join(""))
      )
    )
  }

  // AI SDK: its idiomatic streaming API, every part of the full stream consumed.
  const provider = createOpenAICompatible({ name: "bench", baseURL: baseUrl, apiKey: "bench", includeUsage: true })
  const aiSdk = async (deltas: number) => {
    const result = streamText({ model: provider(`deltas-${deltas}`), prompt: "hi", maxRetries: 0 })
    const parts: Array<string> = []
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") parts.push(part.text)
      else if (part.type === "error") throw part.error
    }
    return parts.join("")
  }

  const contenders = [
    { name: "loopcord", run: loopcord },
    { name: "AI SDK", run: aiSdk }
  ] as const
  const results = new Map<string, Map<number, Array<Sample>>>(contenders.map((c) => [c.name, new Map()]))

  for (const deltas of sizes) {
    const expected = benchText(deltas)
    for (let round = 0; round < warmups; round += 1) {
      for (const contender of contenders) await measure(contender.run, deltas, expected)
    }
    for (let round = 0; round < repetitions[deltas]!; round += 1) {
      // Alternate who goes first so drift (heat, GC, the other core) hits both equally.
      const order = round % 2 === 0 ? contenders : [...contenders].reverse()
      for (const contender of order) {
        const samples = results.get(contender.name)!.get(deltas) ?? []
        samples.push(await measure(contender.run, deltas, expected))
        results.get(contender.name)!.set(deltas, samples)
      }
    }
  }
  await runtime.dispose()
  server.stop()

  const stat = (name: string, deltas: number, key: keyof Sample) => median(results.get(name)!.get(deltas)!.map((s) => s[key]))
  const lines: Array<string> = [
    "## Provider stream consumption (OpenAI-compatible SSE over loopback)",
    "",
    `loopcord \`OpenAiCompatible.layer\` (over providerHttpClient: loopcord's undici HttpClient) vs AI SDK \`streamText\` + \`@ai-sdk/openai-compatible\`, whole stream to the last event, exact text verified. Server in its own process, writing as fast as the socket drains; ${warmups} warm-up rounds, then medians of ${sizes.map((s) => `${repetitions[s]}×${s / 1000}k`).join(", ")}, contenders alternating, a forced GC and an unmeasured ${rewarmDeltas}-delta run before each measured one. Node ${process.version}, ${cpus().length} cores (shared machine: absolute numbers are noisy, ratios are the result). Ratio = loopcord / AI SDK (below 1 = loopcord faster).`,
    "",
    "| deltas | loopcord CPU ms/1k | AI SDK CPU ms/1k | CPU ratio | loopcord wall ms | AI SDK wall ms | wall ratio |",
    "|---:|---:|---:|---:|---:|---:|---:|"
  ]
  for (const deltas of sizes) {
    const per1k = deltas / 1000
    const ourCpu = stat("loopcord", deltas, "cpuMs") / per1k
    const theirCpu = stat("AI SDK", deltas, "cpuMs") / per1k
    const ourWall = stat("loopcord", deltas, "wallMs")
    const theirWall = stat("AI SDK", deltas, "wallMs")
    lines.push(
      `| ${deltas.toLocaleString("en-US")} | ${ourCpu.toFixed(2)} | ${theirCpu.toFixed(2)} | ${(ourCpu / theirCpu).toFixed(2)} | ${ourWall.toFixed(1)} | ${theirWall.toFixed(1)} | ${(ourWall / theirWall).toFixed(2)} |`
    )
  }
  const linearity = (name: string, key: keyof Sample) => stat(name, 50_000, key) / stat(name, 10_000, key)
  const ourLinearity = linearity("loopcord", "wallMs")
  lines.push(
    "",
    `Linearity (50k / 10k, target ≤ 5.5): wall loopcord ${ourLinearity.toFixed(2)}, AI SDK ${linearity("AI SDK", "wallMs").toFixed(2)}; CPU loopcord ${
      linearity("loopcord", "cpuMs").toFixed(2)
    }, AI SDK ${linearity("AI SDK", "cpuMs").toFixed(2)}.`,
    `Targets: at least as fast as the AI SDK (CPU and wall ratios ≤ 1) and linear: ${
      sizes.every((d) => stat("loopcord", d, "cpuMs") <= stat("AI SDK", d, "cpuMs")) && ourLinearity <= 5.5 ? "met" : "NOT met"
    }.`
  )
  process.stdout.write(`${lines.join("\n")}\n`)
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`)
    process.exit(1)
  }
)
