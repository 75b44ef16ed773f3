import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Layer, Logger } from "effect"
import type { HttpClient } from "effect/http"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import * as Anthropic from "../../src/provider/anthropic/Anthropic"
import * as Gemini from "../../src/provider/google/Gemini"
import type { LanguageModel } from "../../src/provider/LanguageModel"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import * as OpenAiResponses from "../../src/provider/openai/OpenAiResponses"
import { maxCallsPerPass } from "../../src/provider/toolArguments"
import { fakeLlmServer, splitWrites } from "../support/fakeProviders/FakeLlmServer"
import { anthropicStream, messageDelta, messageStart, messageStop, thinkingBlock, toolUseBlock } from "../support/fakeProviders/anthropic"
import { chunk, finishChunk, openAiStream, toolCallChunk } from "../support/fakeProviders/openAiCompatible"
import { buildModel, collect, request, withoutKeepAlives } from "./harness"

/** Several tool calls in one pass, over loopback, from each vendor's wire format. */

const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "parallelCalls")
const fixture = (name: string): string => readFileSync(join(fixturesDir, name), "utf8")

/** Serves the fixture cut at odd sizes (frames and JSON split across TCP writes) and runs one pass. */
const passOver = (
  body: string,
  layer: (url: string) => Layer.Layer<LanguageModel, never, HttpClient.HttpClient>
) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    server.enqueue({ parts: splitWrites(body, [37, 5, 211, 1, 64]) })
    const model = yield* buildModel(layer(server.url))
    const result = yield* collect(model, request())
    assert.isUndefined(result.error)
    return { events: withoutKeepAlives(result.events), server }
  })

const callsOf = (events: ReadonlyArray<ProviderEvent>) => events.flatMap((event) => (event._tag === "ToolCall" ? [event.call] : []))

/** Every call comes after the usage and text, before the one Finish, and nothing else comes between them. */
const assertCallsThenFinish = (events: ReadonlyArray<ProviderEvent>, calls: number) => {
  const tags = events.map((event) => event._tag)
  const firstCall = tags.indexOf("ToolCall")
  assert.deepStrictEqual(tags.slice(firstCall), [...Array.from({ length: calls }, () => "ToolCall"), "Finish"])
  assert.deepStrictEqual(events.at(-1), ProviderEvent.Finish({ reason: "tool_calls" }))
  assert.isBelow(tags.indexOf("Usage"), firstCall, "the usage comes before the calls")
}

describe("parallel tool calls: every call of a pass arrives, in the model's order", () => {
  it.live("OpenAI Chat Completions: three calls at indexes 0-2, argument deltas interleaved", () =>
    Effect.gen(function*() {
      const { events } = yield* passOver(fixture("openai-chat.sse"), (url) => OpenAiCompatible.layer({ baseUrl: `${url}/v1` }))
      assertCallsThenFinish(events, 3)
      assert.deepStrictEqual(callsOf(events), [
        { name: "get_weather", args: { city: "Paris" }, id: "call_Wm3nFq1Zk" },
        { name: "get_time", args: { zone: "Europe/Paris" }, id: "call_Xa9pLk2Tb" },
        { name: "web_search", args: { query: "Paris events" }, id: "call_Yc4rNm8Qd" }
      ])
    }))

  it.live("Anthropic Messages: two tool_use blocks with input_json_delta after a text block", () =>
    Effect.gen(function*() {
      const { events } = yield* passOver(fixture("anthropic.sse"), (url) => Anthropic.layer({ baseUrl: url, promptCache: false }))
      assert.deepStrictEqual(events[0], ProviderEvent.TextDelta({ text: "I'll check both." }))
      assertCallsThenFinish(events, 2)
      assert.deepStrictEqual(callsOf(events), [
        { name: "get_weather", args: { city: "Paris" }, id: "toolu_01Ab3Weather" },
        { name: "get_time", args: { zone: "Europe/Paris" }, id: "toolu_01Cd4Time" }
      ])
    }))

  it.live("Gemini: two functionCall parts in one chunk and a third in the next; each keeps its own part's signature", () =>
    Effect.gen(function*() {
      const { events } = yield* passOver(fixture("gemini.sse").replace(/\n/g, "\r\n"), (url) => Gemini.layer({ baseUrl: url }))
      assert.deepStrictEqual(events[0], ProviderEvent.TextDelta({ text: "Checking." }))
      assertCallsThenFinish(events, 3)
      assert.deepStrictEqual(callsOf(events), [
        { name: "get_weather", args: { city: "Paris" }, thoughtSignature: "CiQB0e2Kb1sigA==" },
        { name: "get_time", args: { zone: "Europe/Paris" } },
        { name: "web_search", args: { query: "Paris events" } }
      ])
    }))

  it.live("OpenAI Responses: two function_call items, argument deltas interleaved by item id; the reasoning goes on the first", () =>
    Effect.gen(function*() {
      const { events } = yield* passOver(fixture("openai-responses.sse"), (url) => OpenAiResponses.layer({ baseUrl: `${url}/v1` }))
      assertCallsThenFinish(events, 2)
      assert.deepStrictEqual(callsOf(events), [
        {
          name: "get_weather",
          args: { city: "Paris" },
          id: "call_Q1wErTy",
          reasoningDetails: [{ type: "reasoning", id: "rs_68aPar01", summary: [], encrypted_content: "gAAAAABoEnc==" }]
        },
        { name: "get_time", args: { zone: "Europe/Paris" }, id: "call_Z9xCvBn" }
      ])
    }))
})

describe("parallel tool calls: the bounds hold for every call", () => {
  const openAi = (jsonRepairMaxChars?: number) =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, ...(jsonRepairMaxChars === undefined ? {} : { jsonRepairMaxChars }) }))
      return { server, model }
    })

  it.live("Chat Completions calls go out in index order, whatever order they started in", () =>
    Effect.gen(function*() {
      const { model, server } = yield* openAi()
      server.enqueue(openAiStream([
        toolCallChunk({ index: 1, id: "call_b", name: "get_time", arguments: "{}" }),
        toolCallChunk({ index: 0, id: "call_a", name: "get_weather", arguments: "{\"city\":\"Oslo\"}" }),
        finishChunk("tool_calls")
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(callsOf(result.events).map((call) => call.id), ["call_a", "call_b"])
    }))

  it.live("a second call outgrowing the argument cap stops the stream: both calls go out, only that one refused as truncated", () =>
    Effect.gen(function*() {
      const { model, server } = yield* openAi(1024)
      server.enqueue(openAiStream([
        toolCallChunk({ index: 0, id: "call_a", name: "get_time", arguments: "{\"zone\":\"UTC\"}" }),
        toolCallChunk({ index: 1, id: "call_b", name: "write_file", arguments: "{\"text\":\"" }),
        toolCallChunk({ index: 1, arguments: "x".repeat(1100) }),
        finishChunk("tool_calls")
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(callsOf(result.events), [
        { name: "get_time", args: { zone: "UTC" }, id: "call_a" },
        { name: "write_file", args: {}, argumentsTruncated: true, id: "call_b" }
      ])
      assert.deepStrictEqual(result.events.at(-1), ProviderEvent.Finish({ reason: "length" }))
    }))

  it.live("finish `length` cuts the call still streaming; the complete one before it stands", () =>
    Effect.gen(function*() {
      const { model, server } = yield* openAi()
      server.enqueue(openAiStream([
        toolCallChunk({ index: 0, id: "call_a", name: "get_time", arguments: "{\"zone\":\"UTC\"}" }),
        toolCallChunk({ index: 1, id: "call_b", name: "update_memory", arguments: "{\"a\":\"x\",\"b\":\"cu" }),
        finishChunk("length")
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(callsOf(result.events), [
        { name: "get_time", args: { zone: "UTC" }, id: "call_a" },
        { name: "update_memory", args: { a: "x" }, argumentsTruncated: true, id: "call_b" }
      ])
    }))

  it.live(`a pass of more than ${maxCallsPerPass} calls keeps the first ${maxCallsPerPass}, with one warning`, () =>
    Effect.gen(function*() {
      const { model, server } = yield* openAi()
      const count = maxCallsPerPass + 6
      server.enqueue(openAiStream([
        ...Array.from({ length: count }, (_, index) => toolCallChunk({ index, id: `call_${index}`, name: "ping", arguments: "{}" })),
        finishChunk("tool_calls")
      ]))
      const logs: Array<string> = []
      const logger = Logger.make(({ message }) => logs.push(String(message)))
      const result = yield* collect(model, request()).pipe(Effect.provide(Logger.layer([logger])))
      const ids = callsOf(result.events).map((call) => call.id)
      assert.deepStrictEqual(ids, Array.from({ length: maxCallsPerPass }, (_, index) => `call_${index}`))
      assert.strictEqual(logs.filter((line) => line.includes(`more than ${maxCallsPerPass} tool calls`)).length, 1)
    }))
})

describe("parallel tool calls: the pass's reasoning is replayed once, with its first call", () => {
  it.live("Chat Completions: reasoning_content and reasoning_details on the first call only", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }))
      server.enqueue(openAiStream([
        chunk({ reasoning_content: "two lookups", reasoning_details: [{ type: "reasoning.text", text: "two lookups", index: 0 }] }),
        toolCallChunk({ index: 0, id: "call_a", name: "get_time", arguments: "{}" }),
        toolCallChunk({ index: 1, id: "call_b", name: "ping", arguments: "{}" }),
        finishChunk("tool_calls")
      ]))
      const calls = callsOf((yield* collect(model, request())).events)
      assert.deepStrictEqual(calls, [
        {
          name: "get_time",
          args: {},
          id: "call_a",
          reasoningContent: "two lookups",
          reasoningDetails: [{ type: "reasoning.text", text: "two lookups", index: 0 }]
        },
        { name: "ping", args: {}, id: "call_b" }
      ])
    }))

  it.live("Anthropic: the thinking blocks on the first call only", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(Anthropic.layer({ baseUrl: server.url, promptCache: false }))
      server.enqueue(anthropicStream([
        messageStart(),
        ...thinkingBlock(0, ["two ", "lookups"], "sig-1"),
        ...toolUseBlock(1, { id: "toolu_a", name: "get_time" }, ["{}"]),
        ...toolUseBlock(2, { id: "toolu_b", name: "ping" }, ["{}"]),
        messageDelta("tool_use", 20),
        messageStop()
      ]))
      const calls = callsOf((yield* collect(model, request())).events)
      assert.deepStrictEqual(calls, [
        { name: "get_time", args: {}, id: "toolu_a", reasoningDetails: [{ type: "thinking", thinking: "two lookups", signature: "sig-1" }] },
        { name: "ping", args: {}, id: "toolu_b" }
      ])
    }))
})
