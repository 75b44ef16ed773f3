import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer } from "effect"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import { toolSuccess } from "../../../src/domain/ToolResult"
import { ProviderConfig } from "../../../src/config/ProviderConfig"
import { routePlanLayer } from "../../../src/loop/RoutePlan"
import { runGenerationTurn } from "../../../src/loop/generationTurn"
import { KeyPool } from "../../../src/loop/KeyPool"
import { layerConfigFor } from "../../../src/provider/httpProviders"
import * as NovelAi from "../../../src/provider/novelai/NovelAi"
import { withLoopHarness } from "../../loop/harness"
import { fakeLlmServer, jsonResponse } from "../../support/fakeProviders/FakeLlmServer"
import { novelAiStory, novelAiStream } from "../../support/fakeProviders/novelAi"
import { constantTool } from "../../support/tools/testTools"
import { buildModel, collect, HttpLive, readFileTool, request, userMessage, withoutKeepAlives } from "../harness"

const setup = (options: NovelAi.NovelAiOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    const model = yield* buildModel(NovelAi.layer({ baseUrl: server.url, botName: "Mira", ...options }))
    return { server, model }
  })

const finishOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "Finish")
  return found?._tag === "Finish" ? found.reason : undefined
}
const usageOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "Usage")
  return found?._tag === "Usage" ? found.usage : undefined
}
const ofTag = <T extends ProviderEvent["_tag"]>(events: ReadonlyArray<ProviderEvent>, tag: T) =>
  events.filter((event): event is Extract<ProviderEvent, { _tag: T }> => event._tag === tag)

/** Words as NovelAI streams them: a leading space on every token but the first. */
const tokens = (text: string) => text.split(/(?= )/)

describe("NovelAI: the native text API over loopback (/ai/generate-stream)", () => {
  it.live("one fragment: the flat prompt, the bot's label last, no tools on the wire, text without the leading space, finish stop", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 40 })
      server.enqueue(novelAiStream(tokens(" Hello Ana, nice to see you."), { crlf: true, splitSizes: [5, 11, 3] }))
      const result = yield* collect(model, request({
        system: "You are Mira, a friendly barista.",
        messages: [userMessage("hi Mira!", "Ana"), { role: "assistant", content: "Welcome!" }, { role: "system", content: "[System: it is morning]" }],
        tools: [readFileTool],
        temperature: 1.1
      }))
      assert.isUndefined(result.error)
      assert.strictEqual(model.name, "novelai")
      assert.strictEqual(result.text, "Hello Ana, nice to see you.")
      assert.strictEqual(finishOf(result.events), "stop")
      assert.deepStrictEqual(ofTag(result.events, "ToolCall"), [], "NovelAI never emits a tool call")
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/ai/generate-stream")
      assert.strictEqual(sent.headers.authorization, "Bearer sk-test-key")
      assert.strictEqual(sent.headers.accept, "text/event-stream")
      const body = sent.json as { input: string; model: string; parameters: Record<string, unknown> }
      assert.deepStrictEqual(Object.keys(body).sort(), ["input", "model", "parameters"], "no tools are declared")
      assert.strictEqual(body.model, "fake-model")
      assert.deepStrictEqual(body.parameters, { use_string: true, min_length: 1, temperature: 1.1, max_length: 40 })
      assert.strictEqual(body.input, "You are Mira, a friendly barista.\n***\nAna: hi Mira!\nMira: Welcome!\n[System: it is morning]\nMira:")
      assert.deepStrictEqual(usageOf(result.events), { inputTokens: Math.ceil(body.input.length / 4), outputTokens: 6, totalTokens: Math.ceil(body.input.length / 4) + 6 })
    }))

  it.live("fragments continue the prompt plus what was generated until the model stops; one budget for all of them", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 8, maxOutputTokens: 100 })
      const story = tokens(" The rain had stopped. Mira wiped the counter, hummed a tune, and looked up at the door as the bell rang twice.")
      assert.strictEqual(story.length, 22)
      const fake = novelAiStory(story)
      server.setHandler(fake.handler)
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.strictEqual(result.text, story.join("").trimStart())
      assert.deepStrictEqual(fake.fragments, [[0, 8, 8], [8, 8, 8], [16, 8, 6]], "each continues where the last stopped; the last came short: the model ended")
      const inputs = server.requests.map((sent) => (sent.json as { input: string }).input)
      assert.isTrue(inputs[1]!.endsWith(`Mira:${story.slice(0, 8).join("")}`))
      assert.isTrue(inputs[2]!.endsWith(story.slice(0, 16).join("")))
      assert.strictEqual(finishOf(result.events), "stop")
      assert.strictEqual(usageOf(result.events)?.outputTokens, 22)
    }))

  it.live("the budget runs out mid-sentence: the last fragment asks only for what is left, the unfinished sentence is held back as the continuation fragment", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 8, maxOutputTokens: 12 })
      const story = tokens(" The rain had stopped. Mira wiped the counter and looked up at the door as the bell rang twice.")
      const fake = novelAiStory(story)
      server.setHandler(fake.handler)
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(fake.fragments.map(([, maxLength]) => maxLength), [8, 4], "one total output budget")
      assert.strictEqual(result.text, "The rain had stopped. ")
      assert.deepStrictEqual(ofTag(result.events, "ContinuationFragment"), [ProviderEvent.ContinuationFragment({ text: "Mira wiped the counter and looked up at" })])
      assert.strictEqual(finishOf(result.events), "length")
      assert.strictEqual(usageOf(result.events)?.outputTokens, 12)
    }))

  it.live("a reply that is one unfinished sentence at the budget is shown as it is, never dropped", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 5, maxOutputTokens: 5 })
      server.setHandler(novelAiStory(tokens(" Mira wiped the counter slowly and carefully")).handler)
      const result = yield* collect(model, request())
      assert.strictEqual(result.text, "Mira wiped the counter slowly")
      assert.deepStrictEqual(ofTag(result.events, "ContinuationFragment"), [])
      assert.strictEqual(finishOf(result.events), "length")
    }))

  it.live("the reply ends where the model starts another speaker's line; the request is closed at once", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 40 })
      server.enqueue(novelAiStream([" Sure", ", one", " latte.", "\n", "An", "a:", " thanks", "!"], { after: "hang" }))
      const result = yield* collect(model, request({ messages: [userMessage("a latte please", "Ana")] }))
      assert.isUndefined(result.error)
      assert.strictEqual(result.text, "Sure, one latte.")
      assert.strictEqual(finishOf(result.events), "stop")
      const sent = server.requests[0]!
      yield* Effect.promise(() => sent.closed).pipe(Effect.timeout(Duration.seconds(5)))
      assert.isTrue(sent.isClosed())
    }))

  it.live("a line that only looks like a label at first is text", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 40 })
      server.enqueue(novelAiStream([" Menu", ":", "\n", "An", "d", " also", " cake."]))
      const result = yield* collect(model, request({ messages: [userMessage("menu?", "Ana")] }))
      assert.strictEqual(result.text, "Menu:\nAnd also cake.")
    }))

  it.live("<details> scene metadata is drained from the visible text, even cut across tokens", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 40 })
      server.enqueue(novelAiStream([" She smiles.", " <det", "ails><summary>Scene</sum", "mary>Cafe, morning", "</deta", "ils>", " Welcome back."]))
      const result = yield* collect(model, request())
      assert.strictEqual(result.text, "She smiles.  Welcome back.")
      assert.deepStrictEqual(ofTag(result.events, "SceneDetails"), [ProviderEvent.SceneDetails({ text: "Cafe, morning" })])
    }))

  it.live("HTTP errors through the shared table (401 ⇒ Auth, 429 ⇒ RateLimit), an error payload in the stream, an empty body", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        jsonResponse(401, { statusCode: 401, message: "Invalid accessToken." }),
        jsonResponse(429, { statusCode: 429, message: "Too many concurrent requests" }, { "retry-after": "1" }),
        { parts: [{ write: "event: newToken\nid: 0\ndata: {\"token\":\" Hi\",\"ptr\":0,\"final\":false}\n\n" }, { write: "data: {\"error\":\"Internal error\"}\n\n" }] },
        { parts: [] }
      )
      const auth = (yield* collect(model, request())).error
      assert.strictEqual(auth?.reason, "Auth")
      assert.include(auth!.detail, "Invalid accessToken")
      const limited = (yield* collect(model, request())).error
      assert.strictEqual(limited?.reason, "RateLimit")
      assert.deepStrictEqual(limited?.retryAfter, Duration.seconds(1))
      const broken = yield* collect(model, request())
      assert.strictEqual(broken.error?.reason, "Server")
      assert.include(broken.error!.detail, "Internal error")
      assert.strictEqual((yield* collect(model, request())).error?.reason, "InvalidResponse")
    }))

  it.live("a failure mid-reply leaves the unshown fragment for the retry: it is shown first and continued, within what is left of the budget", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ fragmentTokens: 6, maxOutputTokens: 30 })
      const story = tokens(
        " The door opened. A tall man walked in, shook off the rain, and smiled. He ordered tea. Mira nodded and turned to the kettle." +
          " The cafe grew quiet. Outside, the street lamps came on one by one. She poured the tea and set it down. He thanked her softly."
      )
      assert.isAbove(story.length, 40)
      const fake = novelAiStory(story)
      // The first fragment arrives, the second request is refused.
      server.enqueue(novelAiStream(story.slice(0, 6)), jsonResponse(503, { statusCode: 503, message: "Service unavailable" }))
      const first = yield* collect(model, request())
      assert.strictEqual(first.error?.reason, "Server")
      assert.strictEqual(first.text, "The door opened. ")
      assert.strictEqual(usageOf(first.events)?.outputTokens, 6, "the failed pass reports what it spent")
      server.setHandler(fake.handler)
      const retry = yield* collect(model, request({ assistantPrefill: first.text }))
      assert.isUndefined(retry.error)
      assert.isTrue(retry.text.startsWith("A tall man walked in"), "the carried fragment comes first")
      const input = (server.requests[2]!.json as { input: string }).input
      assert.isTrue(input.endsWith("Mira: The door opened. A tall man"), input)
      assert.deepStrictEqual(fake.fragments.map(([, maxLength]) => maxLength), [6, 6, 6, 6], "24 tokens left of the one budget of 30")
      assert.strictEqual(usageOf(retry.events)?.outputTokens, 24)
      assert.strictEqual(finishOf(retry.events), "length")
      const held = ofTag(retry.events, "ContinuationFragment").map((event) => event.text).join("")
      assert.strictEqual(first.text + retry.text + held, story.slice(0, 30).join("").trimStart(), "nothing lost, nothing repeated")
      // Taken once: another request continuing the same text starts afresh.
      server.setHandler(novelAiStory(tokens(" Fresh.")).handler)
      assert.strictEqual((yield* collect(model, request({ assistantPrefill: first.text }))).text, "Fresh.")
    }))
})

describe("NovelAI in a whole turn", () => {
  it.live("a rate limit on the second fragment rotates the key; the replacement attempt carries the fragment over and completes the reply", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const story = tokens(" The door opened. A tall man walked in, shook off the rain, and smiled at everyone.")
      const fake = novelAiStory(story)
      server.enqueue(novelAiStream(story.slice(0, 6)), jsonResponse(429, { statusCode: 429, message: "Too many concurrent requests" }))
      server.setHandler(fake.handler)
      const env = ConfigProvider.fromEnv({ env: Object.fromEntries([
        ["LLM_PROVIDER", "novelai"],
        ["LLM_BASE_URL", server.url],
        ["LLM_API_KEYS", "key-1,key-2"],
        ["LLM_MODELS", "llama-3-erato-v1"],
        ["NOVELAI_FRAGMENT_TOKENS", "6"],
        ["NOVELAI_MAX_OUTPUT_TOKENS", "60"],
        ["BOT_PERSONA_NAME", "Mira"]
      ]) })
      const settings = yield* Effect.provide(ProviderConfig, Layer.provide(ProviderConfig.layer, ConfigProvider.layer(env)))
      const modelLayer = layerConfigFor("novelai").pipe(Layer.provide(HttpLive), Layer.provide(ConfigProvider.layer(env)))
      const turnLayer = Layer.mergeAll(modelLayer, routePlanLayer.pipe(Layer.provide(Layer.succeed(ProviderConfig, settings))), KeyPool.Default)
      const { turn, shown } = yield* withLoopHarness({ script: [], tools: [constantTool("web_search", toolSuccess())] }, ({ collected }) =>
        Effect.gen(function*() {
          const turn = yield* runGenerationTurn().pipe(Effect.provide(turnLayer))
          return { turn, shown: yield* collected.delivered }
        }))
      assert.strictEqual(turn.status, "completed")
      assert.deepStrictEqual(turn.attempts, [
        { model: "llama-3-erato-v1", keyIndex: 0, status: "error" },
        { model: "llama-3-erato-v1", keyIndex: 1, status: "completed" }
      ])
      assert.strictEqual(shown, story.join("").trimStart(), "the user saw the whole reply once")
      assert.deepStrictEqual(turn.toolCalls, [])
      // key 1: the first fragment, then the refused second; key 2: the rest (8 tokens: 6 + 2, the model ended).
      assert.deepStrictEqual(server.requests.map((sent) => sent.headers.authorization), ["Bearer key-1", "Bearer key-1", "Bearer key-2", "Bearer key-2"])
      assert.isTrue((server.requests[0]!.json as { input: string }).input.endsWith("\nMira:"), "BOT_PERSONA_NAME is the bot's label")
      assert.strictEqual(turn.usage?.outputTokens, story.length)
    }))
})

describe("NovelAi.layerConfig", () => {
  it.effect("a bad NOVELAI_FRAGMENT_TOKENS fails at start-up naming the variable", () =>
    Effect.gen(function*() {
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["NOVELAI_FRAGMENT_TOKENS", "lots"]]) })
      const error = yield* Layer.build(Layer.provide(NovelAi.layerConfig(), HttpLive)).pipe(
        Effect.provide(ConfigProvider.layer(config)),
        Effect.scoped,
        Effect.flip
      )
      assert.include(String(error), "NOVELAI_FRAGMENT_TOKENS")
    }))

  it.live("reads LLM_BASE_URL and the budgets", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const fake = novelAiStory(tokens(" One two three four five six seven."))
      server.setHandler(fake.handler)
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_BASE_URL", server.url], ["NOVELAI_FRAGMENT_TOKENS", "3"], ["NOVELAI_MAX_OUTPUT_TOKENS", "5"]]) })
      const model = yield* buildModel(NovelAi.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config))))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(fake.fragments.map(([, maxLength]) => maxLength), [3, 2])
      assert.strictEqual(result.text, "One two three four five")
      assert.deepStrictEqual(withoutKeepAlives(result.events).at(-1), ProviderEvent.Finish({ reason: "length" }))
    }))
})
