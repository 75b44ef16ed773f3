/**
 * Runs the fake OpenAI-compatible server in its own process, for benchmarks (the client's
 * `process.cpuUsage()` then measures the client only). Every `POST /v1/chat/completions` whose
 * `model` is `deltas-<N>` gets N text deltas (" w0", " w1", …), a `stop` finish, a usage chunk and
 * `[DONE]`, written in 16 KiB writes. Prints `PORT <n>` on stdout once listening; exits when
 * stdin closes.
 *
 *   const child = spawn(process.execPath, ["--import", "tsx", "test/support/fakeProviders/serveOpenAiText.ts"])
 */
import { startFakeLlmServer } from "./FakeLlmServer"
import { openAiTextResponse } from "./openAiCompatible"

export const benchDelta = (index: number): string => ` w${index % 1000}`

/** The text a client must reconstruct from `deltas-<n>`. */
export const benchText = (deltas: number): string => Array.from({ length: deltas }, (_, index) => benchDelta(index)).join("")

const isMain = process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/\\/g, "/"))

if (isMain) {
  const responses = new Map<number, ReturnType<typeof openAiTextResponse>>()
  const server = await startFakeLlmServer({
    handler: (request) => {
      const model = (request.json as { model?: unknown } | undefined)?.model
      const match = typeof model === "string" ? /^deltas-(\d+)$/.exec(model) : null
      if (match === null) {
        return { status: 400, headers: { "content-type": "application/json" }, parts: [{ write: "{\"error\":{\"message\":\"model must be deltas-<n>\"}}" }] }
      }
      const count = Number(match[1])
      let response = responses.get(count)
      if (response === undefined) {
        response = openAiTextResponse(Array.from({ length: count }, (_, index) => benchDelta(index)))
        responses.set(count, response)
      }
      return response
    }
  })
  process.stdout.write(`PORT ${server.port}\n`)
  process.stdin.resume()
  process.stdin.on("end", () => {
    void server.close().then(() => process.exit(0))
  })
}
