import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type { HttpClient } from "effect/http"
import type { Layer } from "effect"
import type { ToolHistoryEntry } from "../../src/domain/ToolHistoryEntry"
import * as Anthropic from "../../src/provider/anthropic/Anthropic"
import * as Gemini from "../../src/provider/google/Gemini"
import { missingSignaturePlaceholder } from "../../src/provider/google/geminiRequest"
import type { LanguageModel } from "../../src/provider/LanguageModel"
import { novelAiPrompt } from "../../src/provider/novelai/novelAiPrompt"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import * as OpenAiResponses from "../../src/provider/openai/OpenAiResponses"
import { withVerbatimScaffolding } from "../../src/provider/verbatim/verbatimScaffolding"
import { anthropicStream, messageDelta, messageStart, messageStop, textBlock } from "../support/fakeProviders/anthropic"
import { type FakeResponse, fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { geminiFinish, geminiStream, geminiText } from "../support/fakeProviders/gemini"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { completed, created, messageItem, responsesStream } from "../support/fakeProviders/openAiResponses"
import { buildModel, collect, readFileTool, request, userMessage } from "./harness"

/**
 * The calls one pass made (a `batch`) are replayed as ONE assistant turn with every call, then
 * the results in the same order, in each vendor's shape. The history: an older record without a
 * batch, a batch of three (pre-tool text on its first entry, Gemini's signature on its first
 * call, reasoning on its first call), and a batch of one.
 */
const entry = (
  name: string,
  args: Record<string, unknown>,
  result: unknown,
  extra: Partial<ToolHistoryEntry> & { readonly id?: string; readonly call?: Partial<ToolHistoryEntry["functionCall"]> } = {}
): ToolHistoryEntry => {
  const { id, call, ...rest } = extra
  return {
    functionCall: { name, args, ...(id === undefined ? {} : { id }), ...call },
    functionResponse: { name, response: { result } },
    ...rest
  }
}

const history: ReadonlyArray<ToolHistoryEntry> = [
  entry("echo_tool", { text: "hi" }, { echoed: "hi" }, { id: "call_old" }),
  entry("get_weather", { city: "Paris" }, { summary: "18°C, clear", raw: {} }, {
    id: "call_w",
    batch: 2,
    preToolCallTextParts: [{ type: "text", text: "Checking three things." }],
    call: {
      thoughtSignature: "c2lnLXc=",
      reasoningContent: "weather, time, events",
      reasoningDetails: [
        { type: "thinking", thinking: "three lookups", signature: "sig-a" },
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAenc" },
        { type: "reasoning.text", text: "three lookups", index: 0 }
      ]
    }
  }),
  entry("get_time", { zone: "Europe/Paris" }, "12:00", { id: "call_t", batch: 2 }),
  entry("web_search", { query: "Paris events" }, { results: ["fair"] }, { id: "call_s", batch: 2 }),
  entry("ping", {}, { status: "completed" }, { id: "call_p", batch: 3 })
]

const bodyOf = (
  layer: (url: string) => Layer.Layer<LanguageModel, never, HttpClient.HttpClient>,
  answer: FakeResponse,
  functionHistory: ReadonlyArray<ToolHistoryEntry> = history
) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    server.enqueue(answer)
    const model = yield* buildModel(layer(server.url))
    yield* collect(model, request({ tools: [readFileTool], messages: [userMessage("plan my day")], functionHistory }))
    return server.requests[0]!.json as Record<string, unknown>
  })

const openAiBody = (functionHistory?: ReadonlyArray<ToolHistoryEntry>) =>
  bodyOf((url) => OpenAiCompatible.layer({ baseUrl: `${url}/v1` }), openAiStream([textChunk("ok"), finishChunk("stop")]), functionHistory)

const fn = (id: string, name: string, args: string) => ({ id, type: "function", function: { name, arguments: args } })

describe("batch replay: one assistant turn per pass, every result after it", () => {
  it.live("OpenAI Chat Completions: one assistant message with every tool_call, then one tool message per id, in order", () =>
    Effect.gen(function*() {
      const body = yield* openAiBody()
      assert.deepStrictEqual((body.messages as ReadonlyArray<unknown>).slice(2), [
        { role: "assistant", content: null, tool_calls: [fn("call_old", "echo_tool", "{\"text\":\"hi\"}")] },
        { role: "tool", tool_call_id: "call_old", content: "{\"echoed\":\"hi\"}" },
        {
          role: "assistant",
          content: "Checking three things.",
          tool_calls: [
            fn("call_w", "get_weather", "{\"city\":\"Paris\"}"),
            fn("call_t", "get_time", "{\"zone\":\"Europe/Paris\"}"),
            fn("call_s", "web_search", "{\"query\":\"Paris events\"}")
          ],
          reasoning_content: "weather, time, events",
          reasoning_details: [{ type: "reasoning.text", text: "three lookups", index: 0 }]
        },
        { role: "tool", tool_call_id: "call_w", content: "18°C, clear" },
        { role: "tool", tool_call_id: "call_t", content: "12:00" },
        { role: "tool", tool_call_id: "call_s", content: "{\"results\":[\"fair\"]}" },
        { role: "assistant", content: null, tool_calls: [fn("call_p", "ping", "{}")] },
        { role: "tool", tool_call_id: "call_p", content: "{\"status\":\"completed\"}" }
      ])
    }))

  it.live("Anthropic: one assistant message (thinking, text, every tool_use), then ONE user message with every tool_result", () =>
    Effect.gen(function*() {
      const body = yield* bodyOf(
        (url) => Anthropic.layer({ baseUrl: url, promptCache: false }),
        anthropicStream([messageStart(), ...textBlock(0, ["ok"]), messageDelta("end_turn", 1), messageStop()])
      )
      assert.deepStrictEqual((body.messages as ReadonlyArray<unknown>).slice(1), [
        { role: "assistant", content: [{ type: "tool_use", id: "call_old", name: "echo_tool", input: { text: "hi" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_old", content: "{\"echoed\":\"hi\"}" }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "three lookups", signature: "sig-a" },
            { type: "text", text: "Checking three things." },
            { type: "tool_use", id: "call_w", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "call_t", name: "get_time", input: { zone: "Europe/Paris" } },
            { type: "tool_use", id: "call_s", name: "web_search", input: { query: "Paris events" } }
          ]
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_w", content: "18°C, clear" },
            { type: "tool_result", tool_use_id: "call_t", content: "12:00" },
            { type: "tool_result", tool_use_id: "call_s", content: "{\"results\":[\"fair\"]}" }
          ]
        },
        { role: "assistant", content: [{ type: "tool_use", id: "call_p", name: "ping", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_p", content: "{\"status\":\"completed\"}" }] }
      ])
    }))

  it.live("Gemini: one model content with every functionCall part (the signature where Gemini put it), then the functionResponses in order", () =>
    Effect.gen(function*() {
      const body = yield* bodyOf((url) => Gemini.layer({ baseUrl: url }), geminiStream([geminiText("ok"), geminiFinish("STOP")]))
      const call = (name: string, args: Record<string, unknown>, id: string) => ({ functionCall: { name, args, id } })
      const response = (name: string, result: unknown, id: string) => ({ functionResponse: { name, response: { result }, id } })
      assert.deepStrictEqual((body.contents as ReadonlyArray<unknown>).slice(1), [
        // An older record no Gemini model signed: the placeholder on its (first) call.
        { role: "model", parts: [{ ...call("echo_tool", { text: "hi" }, "call_old"), thoughtSignature: missingSignaturePlaceholder }] },
        { role: "user", parts: [response("echo_tool", { echoed: "hi" }, "call_old")] },
        {
          role: "model",
          parts: [
            { text: "Checking three things." },
            { ...call("get_weather", { city: "Paris" }, "call_w"), thoughtSignature: "c2lnLXc=" },
            call("get_time", { zone: "Europe/Paris" }, "call_t"),
            call("web_search", { query: "Paris events" }, "call_s")
          ]
        },
        {
          role: "user",
          parts: [
            response("get_weather", "18°C, clear", "call_w"),
            response("get_time", "12:00", "call_t"),
            response("web_search", { results: ["fair"] }, "call_s")
          ]
        },
        { role: "model", parts: [{ ...call("ping", {}, "call_p"), thoughtSignature: missingSignaturePlaceholder }] },
        { role: "user", parts: [response("ping", { status: "completed" }, "call_p")] }
      ])
    }))

  it.live("Gemini: a batch no Gemini model signed carries the placeholder on its first call only", () =>
    Effect.gen(function*() {
      const body = yield* bodyOf((url) => Gemini.layer({ baseUrl: url }), geminiStream([geminiText("ok"), geminiFinish("STOP")]), [
        entry("get_time", {}, "12:00", { batch: 1 }),
        entry("ping", {}, "ok", { batch: 1 })
      ])
      assert.deepStrictEqual((body.contents as ReadonlyArray<unknown>).slice(1), [
        {
          role: "model",
          parts: [
            { functionCall: { name: "get_time", args: {} }, thoughtSignature: missingSignaturePlaceholder },
            { functionCall: { name: "ping", args: {} } }
          ]
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_time", response: { result: "12:00" } } },
            { functionResponse: { name: "ping", response: { result: "ok" } } }
          ]
        }
      ])
    }))

  it.live("OpenAI Responses: the reasoning, the pre-tool text, every function_call, then every function_call_output by call_id", () =>
    Effect.gen(function*() {
      const body = yield* bodyOf(
        (url) => OpenAiResponses.layer({ baseUrl: `${url}/v1` }),
        responsesStream([created(), ...messageItem("msg", ["ok"]), completed()])
      )
      const call = (id: string, name: string, args: string) => ({ type: "function_call", call_id: id, name, arguments: args })
      const output = (id: string, text: string) => ({ type: "function_call_output", call_id: id, output: text })
      assert.deepStrictEqual((body.input as ReadonlyArray<unknown>).slice(1), [
        call("call_old", "echo_tool", "{\"text\":\"hi\"}"),
        output("call_old", "{\"echoed\":\"hi\"}"),
        { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAenc" },
        { role: "assistant", content: "Checking three things." },
        call("call_w", "get_weather", "{\"city\":\"Paris\"}"),
        call("call_t", "get_time", "{\"zone\":\"Europe/Paris\"}"),
        call("call_s", "web_search", "{\"query\":\"Paris events\"}"),
        output("call_w", "18°C, clear"),
        output("call_t", "12:00"),
        output("call_s", "{\"results\":[\"fair\"]}"),
        call("call_p", "ping", "{}"),
        output("call_p", "{\"status\":\"completed\"}")
      ])
    }))

  it.live("call ids are unique in the request: calls without ids, or two calls given the same id, get their own", () =>
    Effect.gen(function*() {
      const body = yield* openAiBody([
        entry("get_time", {}, "a", { batch: 1 }),
        entry("get_time", {}, "b", { batch: 1 }),
        entry("ping", {}, "c", { id: "call_dup", batch: 2 }),
        entry("ping", {}, "d", { id: "call_dup", batch: 2 }),
        // A provider id that is also what position 1 derives.
        entry("ping", {}, "e", { id: "call_1" })
      ])
      const messages = body.messages as ReadonlyArray<Record<string, unknown>>
      const called = messages.flatMap((message) => ((message.tool_calls ?? []) as ReadonlyArray<{ readonly id: string }>).map((call) => call.id))
      const answered = messages.flatMap((message) => (message.role === "tool" ? [message.tool_call_id as string] : []))
      assert.deepStrictEqual(called, ["call_1", "call_2", "call_dup", "call_4", "call_5"])
      assert.deepStrictEqual(answered, called)
      assert.strictEqual(messages.filter((message) => message.role === "assistant").length, 3)
    }))
})

describe("batch replay in the text-only formats", () => {
  it("verbatim: the calls of a pass are one assistant message (one a line), their results one user message", () => {
    const scaffolded = withVerbatimScaffolding(request({ tools: [readFileTool], messages: [userMessage("plan my day")], functionHistory: history }))
    assert.deepStrictEqual(scaffolded.messages.slice(-6).map((message) => [message.role, message.content]), [
      ["assistant", "`echo_tool({\"text\":\"hi\"})`"],
      ["user", "[System: Result of echo_tool]\n{\"echoed\":\"hi\"}"],
      [
        "assistant",
        "Checking three things.\n`get_weather({\"city\":\"Paris\"})`\n`get_time({\"zone\":\"Europe/Paris\"})`\n`web_search({\"query\":\"Paris events\"})`"
      ],
      [
        "user",
        "[System: Result of get_weather]\n18°C, clear\n\n[System: Result of get_time]\n12:00\n\n[System: Result of web_search]\n{\"results\":[\"fair\"]}"
      ],
      ["assistant", "`ping({})`"],
      ["user", "[System: Result of ping]\n{\"status\":\"completed\"}"]
    ])
  })

  it("NovelAI: the pass's pre-tool text once, then a note per result, in order", () => {
    const prompt = novelAiPrompt(request({ messages: [userMessage("plan my day", "Ana")], functionHistory: history }), { botName: "Mira", maxChars: 10_000 })
    assert.include(
      prompt,
      [
        "Ana: plan my day",
        "[Result of echo_tool: {\"echoed\":\"hi\"}]",
        "Mira: Checking three things.",
        "[Result of get_weather: 18°C, clear]",
        "[Result of get_time: 12:00]",
        "[Result of web_search: {\"results\":[\"fair\"]}]",
        "[Result of ping: {\"status\":\"completed\"}]",
        "Mira:"
      ].join("\n")
    )
  })
})
