import * as HttpClient from "effect/http/HttpClient"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Result } from "effect"
import { ContextConfig, parseContextWindows } from "../../src/config/ContextConfig"
import type { ProviderKind } from "../../src/config/ProviderConfig"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import * as Anthropic from "../../src/provider/anthropic/Anthropic"
import * as ModelWindowsLive from "../../src/provider/context/modelWindowsLive"
import * as Gemini from "../../src/provider/google/Gemini"
import type { LanguageModel } from "../../src/provider/LanguageModel"
import { ModelWindows } from "../../src/provider/ModelWindows"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { withLoopHarness } from "../loop/harness"
import { fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { type Act, type RequestView, type WindowLog, windowedVendor, type WindowVendor } from "../support/fakeProviders/windowedVendors"
import { pageServer } from "../support/fakeWeb/pageServer"
import { fetchUrlKit } from "../support/fakeWeb/webTestKit"
import { HttpLive } from "./harness"

/**
 * The context budget end to end, on each vendor's real provider over loopback HTTP, against a fake
 * that enforces a window with the vendor's real refusal: a 12-page fetch_url chain (40,000
 * characters a page, the real tool over the test's loopback connector) on a 32,000-token window,
 * a refusal recovered on the same model, and a 120,000-character message on a 16,000-token window.
 */

const VOCABULARY = [
  "the", "context", "window", "of", "a", "model", "is", "measured", "in", "tokens", "and", "every", "request",
  "must", "fit", "inside", "it", "researchers", "compared", "several", "servers", "while", "reading", "long",
  "documentation", "pages", "about", "deployment", "configuration", "with", "careful", "attention", "to", "limits"
]

/** Deterministic English-like text of `chars` characters, sentences and paragraphs. */
const prose = (chars: number, seed: number): string => {
  let text = ""
  for (let index = 0; text.length < chars; index++) {
    const word = VOCABULARY[(index * 7 + seed * 13) % VOCABULARY.length]!
    text += index % 11 === 10 ? `${word}. ` : index % 97 === 96 ? `${word}.\n\n` : `${word} `
  }
  return text.slice(0, chars)
}

interface VendorSetup {
  readonly kind: ProviderKind
  readonly vendor: WindowVendor
  readonly layer: (url: string) => Layer.Layer<LanguageModel, never, HttpClient.HttpClient>
  readonly baseUrl: (url: string) => string
  /** A name the built-in table does not know (its window comes from the setting or the server). */
  readonly model: string
  /** A name the table knows with a larger window than the fake enforces. */
  readonly tableModel: string
}

const setups: ReadonlyArray<VendorSetup> = [
  { kind: "openai-compatible", vendor: "openai", layer: (url) => OpenAiCompatible.layer({ baseUrl: `${url}/v1` }), baseUrl: (url) => `${url}/v1`, model: "fake-model", tableModel: "gpt-4o" },
  { kind: "anthropic", vendor: "anthropic", layer: (url) => Anthropic.layer({ baseUrl: url }), baseUrl: (url) => url, model: "fake-claude", tableModel: "claude-sonnet-4-5" },
  { kind: "google", vendor: "gemini", layer: (url) => Gemini.layer({ baseUrl: url }), baseUrl: (url) => url, model: "fake-gemini", tableModel: "gemini-2.5-flash" },
  { kind: "openai-compatible", vendor: "llamacpp", layer: (url) => OpenAiCompatible.layer({ baseUrl: `${url}/v1` }), baseUrl: (url) => `${url}/v1`, model: "model.gguf", tableModel: "llama3.1:8b" }
]

const PAGE_CHARS = 40_000

/** One turn on `setup`'s provider against the windowed fake, with the real fetch_url tool. */
const runTurn = (setup: VendorSetup, options: {
  readonly window: number
  /** LLM_CONTEXT_TOKENS, if any. */
  readonly setting?: string
  readonly model: string
  readonly question: string
  readonly act: (view: RequestView, pages: string) => Act
  readonly props?: boolean
}) =>
  Effect.gen(function*() {
    const site = yield* pageServer((request, response) => {
      const page = Number(/\/page\/(\d+)/.exec(request.url ?? "")?.[1] ?? 0)
      const paragraphs = prose(PAGE_CHARS, page).split("\n\n").map((paragraph) => `<p>${paragraph}</p>`).join("\n")
      response.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      response.end(request.method === "HEAD" ? undefined : `<html><body><main>${paragraphs}</main></body></html>`)
    })
    const log: WindowLog = { counted: [], refused: [] }
    const server = yield* fakeLlmServer()
    const vendor = windowedVendor(setup.vendor, { window: options.window, log, act: (view) => options.act(view, site.origin), ...(options.props === undefined ? {} : { props: options.props }) })
    server.setHandler(vendor)
    server.setProbeHandler(vendor)
    const kit = fetchUrlKit({ production: false })
    const fetchUrl = yield* kit.tool
    const http = yield* Layer.build(HttpLive)
    const setting = options.setting === undefined ? { all: undefined, byModel: new Map<string, number>() } : Result.getOrThrow(parseContextWindows(options.setting))
    const windows = yield* ModelWindowsLive.make({
      provider: setup.kind,
      baseUrl: setup.baseUrl(server.url),
      apiKey: undefined,
      setting,
      models: [options.model]
    }).pipe(Effect.provide(http))
    const turnLayer = Layer.mergeAll(
      setup.layer(server.url).pipe(Layer.provide(Layer.succeedContext(http))),
      RoutePlan.make([options.model], ["k0", "k1"]),
      KeyPool.Default,
      Layer.succeed(ModelWindows, windows),
      ContextConfig.make()
    )
    return yield* withLoopHarness({ script: [], tools: [fetchUrl], contextItems: [{ role: "user", content: options.question }] }, ({ collected }) =>
      Effect.gen(function*() {
        const turn = yield* runGenerationTurn().pipe(
          Effect.flatMap((result) => Effect.map(Effect.flatMap(KeyPool, (pool) => pool.snapshot), (resting) => ({ result, resting }))),
          Effect.provide(turnLayer)
        )
        return { ...turn, log, notices: yield* collected.notices, requests: server.requests }
      }))
  })

const readPages = (pages: number) => (view: RequestView, origin: string): Act =>
  view.toolResults < pages
    ? { call: { name: "fetch_url", args: { url: `${origin}/page/${view.toolResults}` } } }
    : { text: `Read ${view.toolResults} pages.` }

describe("the context budget against windowed fakes of every vendor [issue 23]", () => {
  for (const setup of setups) {
    it.live(`${setup.vendor}: a 12-page fetch_url chain (40,000 characters a page) completes on a 32,000-token window with no refusal`, () =>
      Effect.gen(function*() {
        const { log, result, resting } = yield* runTurn(setup, {
          window: 32_000,
          // llama.cpp says its window itself (GET /props).
          ...(setup.vendor === "llamacpp" ? {} : { setting: `${setup.model}=32000` }),
          model: setup.model,
          question: "Read the twelve pages and tell me what they say.",
          act: readPages(12)
        })
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.text, "Read 12 pages.")
        assert.deepStrictEqual(log.refused, [], "no request was refused")
        assert.strictEqual(log.counted.length, 13)
        assert.isBelow(Math.max(...log.counted), 32_000)
        assert.strictEqual(result.toolCalls.length, 12)
        assert.isTrue(result.toolCalls.every((call) => call.success))
        assert.isAbove(result.context?.elided.toolResults ?? 0, 0, "older pages were elided")
        assert.strictEqual(result.context?.window, 32_000)
        assert.strictEqual(result.context?.windowSource, setup.vendor === "llamacpp" ? "discovered" : "setting")
        assert.strictEqual(resting.size, 0)
      }))

    it.live(`${setup.vendor}: a refusal is recovered on the same model, the window learned from it, and the key never rested`, () =>
      Effect.gen(function*() {
        const { log, result, resting } = yield* runTurn(setup, {
          window: 32_000,
          model: setup.tableModel,
          props: false,
          question: "Read six pages.",
          act: readPages(6)
        })
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.text, "Read 6 pages.")
        assert.strictEqual(log.refused.length, 1, "one refusal, then every request fits")
        assert.deepStrictEqual(result.attempts, [{ model: setup.tableModel, keyIndex: 0, status: "completed" }])
        assert.strictEqual(resting.size, 0, "no key rests")
        assert.strictEqual(result.context?.overflowRefusals, 1)
        assert.strictEqual(result.context?.window, 32_000)
        assert.strictEqual(result.context?.windowSource, "learned")
      }))

    it.live(`${setup.vendor}: a 120,000-character message on a 16,000-token window is cut with a marker and the turn completes`, () =>
      Effect.gen(function*() {
        const ask = " What is this text about, briefly?"
        const message = prose(120_000 - ask.length, 3) + ask
        let seen = ""
        const { log, notices, result } = yield* runTurn(setup, {
          window: 16_000,
          ...(setup.vendor === "llamacpp" ? {} : { setting: `16000` }),
          model: setup.model,
          question: message,
          act: (view) => {
            seen = view.userTexts.find((text) => text.endsWith(ask)) ?? ""
            return { text: "It is about context windows." }
          }
        })
        assert.strictEqual(message.length, 120_000)
        assert.strictEqual(result.status, "completed")
        assert.strictEqual(result.text, "It is about context windows.")
        assert.deepStrictEqual(log.refused, [])
        assert.include(seen, "characters of this message were left out: it is longer than the model's context window allows")
        assert.isTrue(seen.endsWith("What is this text about, briefly?"), "the end of the message is kept")
        assert.isBelow(seen.length, 120_000)
        assert.deepStrictEqual(notices.map((notice) => notice._tag), ["MessageShortened"])
        assert.strictEqual(result.context?.cutUserMessage?.totalChars, 120_000)
      }))
  }
})
