import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Option } from "effect"
import { TestClock } from "effect/testing"
import { spawn } from "node:child_process"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { DEMO_BANNER } from "../../src/terminal/firstStart"
import { type LocalServerCandidate, parseLocalServerList, probeLocalServers } from "../../src/terminal/localModelServers"
import { repoRoot } from "./cliProcess"

/**
 * A first start that just works: with nothing configured, `npm start` finds a model server on
 * this machine (a loopback fake Ollama or llama.cpp here, on ports of its own: the real 11434,
 * 1234 and 8080 are never asked), or opens the scripted demo with its banner.
 */

interface FakeLocalServer {
  readonly port: number
  /** Paths asked, in order. */
  readonly paths: Array<string>
  /** The `model` of every chat completion asked for. */
  readonly chatModels: Array<string>
  readonly close: () => Promise<void>
}

const readBody = async (request: IncomingMessage) => {
  const parts: Array<Buffer> = []
  for await (const part of request) parts.push(part as Buffer)
  return Buffer.concat(parts).toString("utf8")
}

/** Chat completions streamed the OpenAI way, naming the model that answered. */
const chatStream = (response: ServerResponse, model: string) => {
  response.writeHead(200, { "content-type": "text/event-stream" })
  for (const content of ["Hello ", `from ${model}.`]) {
    response.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`)
  }
  response.write(`data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`)
  response.end("data: [DONE]\n\n")
}

/** A loopback server answering `routes` (path → JSON) and chat completions; `silent`: accepts and never answers. */
const fakeLocalServer = (routes: Readonly<Record<string, unknown>>, options: { readonly silent?: boolean } = {}) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<FakeLocalServer>((resolve) => {
        const paths: Array<string> = []
        const chatModels: Array<string> = []
        const server: Server = createServer((request, response) => {
          paths.push(request.url ?? "")
          if (options.silent === true) return
          void readBody(request).then((body) => {
            if (request.url === "/v1/chat/completions") {
              const model = String((JSON.parse(body) as { model?: unknown }).model)
              chatModels.push(model)
              return chatStream(response, model)
            }
            const route = routes[request.url ?? ""]
            response.writeHead(route === undefined ? 404 : 200, { "content-type": "application/json" })
            response.end(JSON.stringify(route ?? { error: "not found" }))
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({
            port: (server.address() as AddressInfo).port,
            paths,
            chatModels,
            close: () => new Promise((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
          }))
      })
    ),
    (server) => Effect.promise(() => server.close())
  )

/** A port nothing listens on (taken, then freed). */
const closedPort = Effect.promise(() =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      server.close(() => resolve(port))
    })
  })
)

const ollamaRoutes = (loaded: ReadonlyArray<string>, all: ReadonlyArray<string>) => ({
  "/api/ps": { models: loaded.map((name) => ({ name, model: name })) },
  "/api/tags": { models: all.map((name) => ({ name, model: name })) }
})
const llamaCppRoutes = { "/v1/models": { object: "list", data: [{ id: "qwen2.5-7b-instruct-q4_k_m.gguf", object: "model" }] } }

describe("the local model servers probe (loopback fakes)", () => {
  it.live("a fake Ollama is found with its loaded model first; a fake llama.cpp with its one model; Ollama is preferred when both answer", () =>
    Effect.gen(function*() {
      const ollama = yield* fakeLocalServer(ollamaRoutes(["qwen3:4b"], ["llama3.2:3b", "qwen3:4b"]))
      const llamacpp = yield* fakeLocalServer(llamaCppRoutes)
      const closed = yield* closedPort
      const only = (kind: LocalServerCandidate["kind"], port: number) => [{ kind, port }]
      const foundOllama = yield* probeLocalServers(only("ollama", ollama.port))
      assert.deepStrictEqual(Option.map(foundOllama, (found) => [found.label, found.origin, found.models]), Option.some(["Ollama", `http://127.0.0.1:${ollama.port}`, ["qwen3:4b", "llama3.2:3b"]]))
      const foundLlama = yield* probeLocalServers(only("llamacpp", llamacpp.port))
      assert.deepStrictEqual(Option.map(foundLlama, (found) => [found.label, found.models]), Option.some(["llama.cpp", ["qwen2.5-7b-instruct-q4_k_m.gguf"]]))
      const both = yield* probeLocalServers([{ kind: "ollama", port: ollama.port }, { kind: "lmstudio", port: closed }, { kind: "llamacpp", port: llamacpp.port }])
      assert.strictEqual(Option.getOrUndefined(both)?.label, "Ollama")
      // Ollama down: llama.cpp answers.
      const fallback = yield* probeLocalServers([{ kind: "ollama", port: closed }, { kind: "llamacpp", port: llamacpp.port }])
      assert.strictEqual(Option.getOrUndefined(fallback)?.label, "llama.cpp")
      // Something else on the port (no model list) is not a model server.
      const other = yield* fakeLocalServer({ "/": "<html>" })
      assert.isTrue(Option.isNone(yield* probeLocalServers(only("llamacpp", other.port))))
      assert.isTrue(Option.isNone(yield* probeLocalServers(only("ollama", closed))))
    }))

  it.effect("a port that accepts and never answers costs the 500 ms budget, never more (TestClock)", () =>
    Effect.gen(function*() {
      const silent = yield* fakeLocalServer({}, { silent: true })
      const probe = yield* Effect.forkChild(probeLocalServers([{ kind: "ollama", port: silent.port }]))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 50)))
      yield* TestClock.adjust(Duration.millis(499))
      assert.isTrue(probe.pollUnsafe() === undefined, "still waiting before the budget is spent")
      yield* TestClock.adjust(Duration.millis(1))
      assert.isTrue(Option.isNone(yield* Fiber.join(probe)))
      assert.deepStrictEqual(silent.paths.slice(0, 1), ["/api/ps"])
    }).pipe(Effect.scoped))

  it("LOOPCORD_LOCAL_MODEL_SERVERS: kind=port pairs, anything else refused", () => {
    assert.deepStrictEqual(parseLocalServerList("ollama=1, llamacpp=2"), [{ kind: "ollama", port: 1 }, { kind: "llamacpp", port: 2 }])
    assert.isUndefined(parseLocalServerList("ollama=99999"))
    assert.isUndefined(parseLocalServerList("vllm=8000"))
  })
})

interface ChatRun {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** `node dist/main.js` (what `npm start` runs) with nothing configured but the given variables, `lines` typed in. */
const chat = (env: Record<string, string>, lines: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<ChatRun>((resolve) => {
      const child = spawn(process.execPath, ["dist/main.js"], {
        cwd: repoRoot,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? repoRoot, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env },
        stdio: ["pipe", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (piece: Buffer) => (stdout += piece.toString("utf8")))
      child.stderr.on("data", (piece: Buffer) => (stderr += piece.toString("utf8")))
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      child.once("close", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
      child.stdin.end(lines.map((line) => `${line}\n`).join(""))
    })
  )

describe("npm start with nothing configured (dist/main.js, a child process)", () => {
  it.live("a loopback Ollama answers: the chat opens against its loaded model and says so; /model picks another of its models", () =>
    Effect.gen(function*() {
      const ollama = yield* fakeLocalServer(ollamaRoutes(["qwen3:4b"], ["qwen3:4b", "llama3.2:3b"]))
      const [lmstudio, llamacpp] = [yield* closedPort, yield* closedPort]
      const run = yield* chat({ LOOPCORD_LOCAL_MODEL_SERVERS: `ollama=${ollama.port},lmstudio=${lmstudio},llamacpp=${llamacpp}` }, ["hi", "/model llama3.2:3b", "again"])
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, `Found Ollama on this machine (http://127.0.0.1:${ollama.port}): chatting with its model qwen3:4b.`)
      assert.include(run.stdout, "Hello from qwen3:4b.")
      assert.include(run.stdout, "Hello from llama3.2:3b.")
      assert.deepStrictEqual(ollama.chatModels, ["qwen3:4b", "llama3.2:3b"])
      assert.notInclude(run.stdout + run.stderr, "LLM_MODELS: required")
    }), 40_000)

  it.live("a loopback llama.cpp answers when Ollama and LM Studio do not", () =>
    Effect.gen(function*() {
      const llamacpp = yield* fakeLocalServer(llamaCppRoutes)
      const [ollama, lmstudio] = [yield* closedPort, yield* closedPort]
      const run = yield* chat({ LOOPCORD_LOCAL_MODEL_SERVERS: `ollama=${ollama},lmstudio=${lmstudio},llamacpp=${llamacpp.port}` }, ["hi"])
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "Found llama.cpp on this machine")
      assert.include(run.stdout, "Hello from qwen2.5-7b-instruct-q4_k_m.gguf.")
    }), 40_000)

  it.live("nothing answers: the scripted demo opens under its three-line banner, never a bare error", () =>
    Effect.gen(function*() {
      const ports = [yield* closedPort, yield* closedPort, yield* closedPort]
      const run = yield* chat({ LOOPCORD_LOCAL_MODEL_SERVERS: `ollama=${ports[0]},lmstudio=${ports[1]},llamacpp=${ports[2]}` }, ["hello demo"])
      assert.strictEqual(run.code, 0, run.stderr)
      assert.deepStrictEqual(run.stdout.split("\n").slice(0, 3), [...DEMO_BANNER])
      assert.include(run.stdout, "You said: hello demo")
      assert.strictEqual(run.stderr.trim(), "")
    }), 40_000)

  it.live("an explicit but invalid configuration still stops with its one line, and no local server is asked", () =>
    Effect.gen(function*() {
      const ollama = yield* fakeLocalServer(ollamaRoutes(["qwen3:4b"], ["qwen3:4b"]))
      const run = yield* chat({ LLM_PROVIDER: "openai-compatible", LOOPCORD_LOCAL_MODEL_SERVERS: `ollama=${ollama.port}` }, ["hi"])
      assert.strictEqual(run.code, 1)
      const lines = run.stderr.trim().split("\n")
      assert.lengthOf(lines, 1, run.stderr)
      assert.include(lines[0], "LLM_MODELS")
      assert.deepStrictEqual(ollama.paths, [])
    }), 40_000)
})
