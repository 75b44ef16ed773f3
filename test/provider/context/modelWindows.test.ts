import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Deferred, type Duration, Effect, Fiber, Layer, Result } from "effect"
import { TestClock } from "effect/testing"
import { contextSettings, parseContextWindows } from "../../../src/config/ContextConfig"
import * as Anthropic from "../../../src/provider/anthropic/Anthropic"
import * as ModelWindowsLive from "../../../src/provider/context/modelWindowsLive"
import { discoverWindow, llamaCppPropsWindow, ollamaShowWindow } from "../../../src/provider/context/windowDiscovery"
import { DEFAULT_CONTEXT_TOKENS, tableWindow } from "../../../src/provider/context/windowTable"
import { fakeLlmServer, type FakeResponse, jsonResponse, type RecordedRequest } from "../../support/fakeProviders/FakeLlmServer"
import { HttpLive } from "../harness"

const notFound: FakeResponse = jsonResponse(404, { error: "not found" })

/** A fake server that answers the given paths (method and path) with JSON, and 404 elsewhere. */
const serving = (routes: Readonly<Record<string, unknown>>) =>
  Effect.tap(fakeLlmServer(), (server) =>
    Effect.sync(() => {
      const answer = (request: RecordedRequest) => {
        const route = `${request.method} ${request.path}`
        return route in routes ? jsonResponse(200, routes[route]) : notFound
      }
      server.setHandler(answer)
      server.setProbeHandler(answer)
    }))

const discover = (baseUrl: string, model: string, timeout: Duration.Input = "2 seconds") =>
  Effect.flatMap(HttpClient.HttpClient, (client) => discoverWindow(client, { baseUrl, apiKey: undefined, timeout }, model)).pipe(
    Effect.provide(HttpLive)
  )

describe("LLM_CONTEXT_TOKENS [issue 23]", () => {
  it("one number, model=tokens pairs, or both; the floor; bad values name the variable", () => {
    assert.deepStrictEqual(parseContextWindows("32768"), Result.succeed({ all: 32768, byModel: new Map() }))
    assert.deepStrictEqual(parseContextWindows(" qwen3:8b=32768 , Llama3.1=8192 "), Result.succeed({ all: undefined, byModel: new Map([["qwen3:8b", 32768], ["llama3.1", 8192]]) }))
    assert.deepStrictEqual(parseContextWindows("16384,qwen3:8b=32_768"), Result.succeed({ all: 16384, byModel: new Map([["qwen3:8b", 32768]]) }))
    assert.deepStrictEqual(parseContextWindows("100"), Result.succeed({ all: 1024, byModel: new Map() }))
    for (const bad of ["lots", "m=", "=4096", "4096,8192", "m=big"]) {
      const parsed = parseContextWindows(bad)
      assert.isTrue(Result.isFailure(parsed), bad)
      if (Result.isFailure(parsed)) assert.include(String(parsed.failure), "LLM_CONTEXT_TOKENS")
    }
  })

  it.effect("CONTEXT_COMPACTION is elide by default, summarize when asked, and nothing else", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) => Effect.result(Effect.provideService(contextSettings, ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env })))
      const byDefault = yield* read({})
      assert.isTrue(Result.isSuccess(byDefault) && byDefault.success.compaction === "elide")
      const asked = yield* read({ CONTEXT_COMPACTION: "Summarize" })
      assert.isTrue(Result.isSuccess(asked) && asked.success.compaction === "summarize")
      const bad = yield* read({ CONTEXT_COMPACTION: "squash" })
      assert.isTrue(Result.isFailure(bad) && String(bad.failure).includes("CONTEXT_COMPACTION"))
    }))
})

describe("the built-in window table [issue 23]", () => {
  it("matches the well-known families by prefix, longest first, route prefixes and tags aside", () => {
    assert.strictEqual(tableWindow("gpt-4o-mini"), 128_000)
    assert.strictEqual(tableWindow("openai/gpt-4.1-mini"), 1_047_576)
    assert.strictEqual(tableWindow("gpt-5"), 400_000)
    assert.strictEqual(tableWindow("o3-mini"), 200_000)
    assert.strictEqual(tableWindow("gpt-4"), 8_192)
    assert.strictEqual(tableWindow("claude-sonnet-4-5"), 200_000)
    assert.strictEqual(tableWindow("gemini-2.5-flash"), 1_048_576)
    assert.strictEqual(tableWindow("meta-llama/Meta-Llama-3.1-8B-Instruct"), 131_072)
    assert.strictEqual(tableWindow("llama3:8b"), 8_192)
    assert.strictEqual(tableWindow("qwen3:8b"), 32_768)
    assert.strictEqual(tableWindow("mistral-large-latest"), 131_072)
    assert.strictEqual(tableWindow("deepseek-chat"), 128_000)
    assert.isUndefined(tableWindow("my-finetune"))
  })
})

describe("window discovery from the model's server (loopback fakes) [issue 23]", () => {
  it("parses what llama.cpp and Ollama say", () => {
    assert.strictEqual(llamaCppPropsWindow({ default_generation_settings: { n_ctx: 8192 }, n_ctx: 32768 }), 8192)
    assert.strictEqual(llamaCppPropsWindow({ n_ctx: 32768 }), 32768)
    assert.isUndefined(llamaCppPropsWindow({ n_ctx: "lots" }))
    assert.strictEqual(ollamaShowWindow({ parameters: "stop \"<|eot|>\"\nnum_ctx 16384", model_info: { "llama.context_length": 131072 } }), 16384)
    // Ollama runs a model with its default num_ctx unless told otherwise.
    assert.strictEqual(ollamaShowWindow({ model_info: { "qwen3.context_length": 40960 } }), 4096)
    assert.strictEqual(ollamaShowWindow({ model_info: { "tiny.context_length": 2048 } }), 2048)
  })

  it.live("llama.cpp: GET /props n_ctx", () =>
    Effect.gen(function*() {
      const server = yield* serving({ "GET /props": { default_generation_settings: { n_ctx: 32000 }, total_slots: 1 } })
      assert.strictEqual(yield* discover(`${server.url}/v1`, "whatever.gguf"), 32000)
    }))

  it.live("Ollama: POST /api/show with the model, num_ctx from its parameters", () =>
    Effect.gen(function*() {
      const server = yield* serving({ "POST /api/show": { parameters: "num_ctx 12288", model_info: { "llama.context_length": 131072 } } })
      assert.strictEqual(yield* discover(`${server.url}/v1`, "llama3.1:8b"), 12288)
      const show = server.probes.find((request) => request.path === "/api/show")
      assert.deepStrictEqual(show?.json, { model: "llama3.1:8b", name: "llama3.1:8b" })
    }))

  it.live("LM Studio: GET /api/v0/models, the loaded window of the model", () =>
    Effect.gen(function*() {
      const server = yield* serving({
        "GET /api/v0/models": {
          data: [
            { id: "other", max_context_length: 131072 },
            { id: "qwen2.5-7b-instruct", state: "loaded", max_context_length: 32768, loaded_context_length: 8192 }
          ]
        }
      })
      assert.strictEqual(yield* discover(`${server.url}/v1`, "qwen2.5-7b-instruct"), 8192)
    }))

  it.live("OpenRouter-style and vLLM model lists: context_length, max_model_len", () =>
    Effect.gen(function*() {
      const openRouter = yield* serving({ "GET /api/v1/models": { data: [{ id: "qwen/qwen3-8b", context_length: 40960, top_provider: { context_length: 32768 } }] } })
      assert.strictEqual(yield* discover(`${openRouter.url}/api/v1`, "qwen/qwen3-8b"), 40960)
      const vllm = yield* serving({ "GET /v1/models": { data: [{ id: "Qwen/Qwen3-8B", max_model_len: 16384 }] } })
      assert.strictEqual(yield* discover(`${vllm.url}/v1`, "Qwen/Qwen3-8B"), 16384)
    }))

  it.live("untrusted answers: an oversized body, junk, a hanging server are no answer (bounded in time)", () =>
    Effect.gen(function*() {
      const junk = yield* serving({ "GET /props": { n_ctx: -5 }, "GET /v1/models": "not a list" })
      assert.isUndefined(yield* discover(`${junk.url}/v1`, "m"))
      const big = yield* fakeLlmServer()
      big.setProbeHandler(() => ({ status: 200, headers: { "content-type": "application/json" }, parts: [{ write: `{"n_ctx": 4096, "pad": "${"x".repeat(300 * 1024)}"}` }] }))
      assert.isUndefined(yield* discover(`${big.url}/v1`, "m"), "a /props body over its cap is not read")
      const hanging = yield* fakeLlmServer()
      hanging.setProbeHandler(() => ({ parts: [], neverRespond: true }))
      const startedAt = Date.now()
      assert.isUndefined(yield* discover(`${hanging.url}/v1`, "m", "300 millis"))
      assert.isBelow(Date.now() - startedAt, 1_500)
    }))
})

describe("ModelWindows: learned, setting, discovered, table, default [issue 23]", () => {
  // The HTTP client lives as long as the test's scope (the probes outlive the call that starts them).
  const live = (options: Partial<ModelWindowsLive.ModelWindowsOptions>) =>
    Effect.flatMap(Layer.build(HttpLive), (http) =>
      ModelWindowsLive.make({ provider: "openai-compatible", baseUrl: undefined, apiKey: undefined, setting: { all: undefined, byModel: new Map() }, models: [], ...options }).pipe(
        Effect.provide(http)
      ))

  it.live("the order of trust, and a refusal's window kept (the smaller wins)", () =>
    Effect.gen(function*() {
      const server = yield* serving({ "GET /props": { n_ctx: 20000 } })
      const windows = yield* live({ baseUrl: `${server.url}/v1`, setting: { all: undefined, byModel: new Map([["set-model", 50000]]) } })
      assert.deepStrictEqual(yield* windows.windowOf("gpt-4o"), { tokens: 20000, source: "discovered" })
      assert.deepStrictEqual(yield* windows.windowOf("SET-MODEL"), { tokens: 50000, source: "setting" })
      yield* windows.learn("set-model", 30000)
      yield* windows.learn("set-model", 40000)
      assert.deepStrictEqual(yield* windows.windowOf("set-model"), { tokens: 30000, source: "learned" })
      const remote = yield* live({})
      assert.deepStrictEqual(yield* remote.windowOf("gpt-4o"), { tokens: 128_000, source: "table" })
      assert.deepStrictEqual(yield* remote.windowOf("my-finetune"), { tokens: DEFAULT_CONTEXT_TOKENS, source: "default" })
      const scripted = yield* live({ provider: "scripted" })
      assert.isUndefined(yield* scripted.windowOf("scripted"))
    }))

  it.effect("Anthropic's required max_tokens is reserved from its window (the provider's own default)", () =>
    Effect.gen(function*() {
      assert.strictEqual(ModelWindowsLive.DEFAULT_OUTPUT_TOKENS.anthropic, Anthropic.defaultMaxTokens)
      const windows = yield* ModelWindowsLive.make({ provider: "anthropic", baseUrl: undefined, apiKey: undefined, setting: { all: undefined, byModel: new Map() }, models: [] }).pipe(
        Effect.provide(HttpLive)
      )
      assert.deepStrictEqual(yield* windows.windowOf("claude-sonnet-4-5"), { tokens: 200_000, source: "table", defaultOutputTokens: Anthropic.defaultMaxTokens })
    }).pipe(Effect.scoped))

  it.live("one probe per model, started at start-up for the configured chain, cached", () =>
    Effect.gen(function*() {
      const server = yield* serving({ "GET /props": { n_ctx: 24000 } })
      const windows = yield* live({ baseUrl: `${server.url}/v1`, models: ["a"] })
      // Asked before any turn asks.
      for (let tries = 0; tries < 200 && server.probes.length === 0; tries++) yield* Effect.sleep("10 millis")
      assert.isAbove(server.probes.length, 0)
      for (let ask = 0; ask < 3; ask++) assert.strictEqual((yield* windows.windowOf("a"))?.tokens, 24000)
      assert.strictEqual(server.probes.filter((request) => request.path === "/props").length, 1)
    }))

  it.effect("a pass waits for a slow first answer at most the discovery wait, then uses the table (TestClock)", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      server.setProbeHandler(() => ({ parts: [], neverRespond: true }))
      const windows = yield* live({ baseUrl: `${server.url}/v1`, discoveryWait: "2 seconds", probeTimeout: "1 hour" })
      const done = yield* Deferred.make<void>()
      const asked = yield* Effect.forkChild(Effect.ensuring(windows.windowOf("qwen3:8b"), Deferred.succeed(done, undefined)))
      yield* TestClock.adjust("1999 millis")
      assert.isFalse(yield* Deferred.isDone(done))
      yield* TestClock.adjust("1 millis")
      assert.deepStrictEqual(yield* Fiber.join(asked), { tokens: 32_768, source: "table" })
    }))
})
