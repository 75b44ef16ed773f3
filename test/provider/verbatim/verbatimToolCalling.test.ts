import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import * as Anthropic from "../../../src/provider/anthropic/Anthropic"
import * as Gemini from "../../../src/provider/google/Gemini"
import * as OpenAiCompatible from "../../../src/provider/openai/OpenAiCompatible"
import { nudge, withVerbatimScaffolding } from "../../../src/provider/verbatim/verbatimScaffolding"
import { verbatim } from "../../../src/provider/verbatim/verbatimToolCalling"
import { anthropicStream, messageDelta, messageStart, messageStop, textBlock } from "../../support/fakeProviders/anthropic"
import { fakeLlmServer } from "../../support/fakeProviders/FakeLlmServer"
import { geminiFinish, geminiStream, geminiText } from "../../support/fakeProviders/gemini"
import { finishChunk, openAiStream, textChunk, toolCallChunk } from "../../support/fakeProviders/openAiCompatible"
import { buildModel, collect, readFileTool, request, userMessage, withoutKeepAlives } from "../harness"

const dialogue = ["one", "two", "three", "four", "five"].map((text) => userMessage(text))

describe("verbatim scaffolding (spec §8)", () => {
  it("adds the schema dump first and the nudge three dialogue items from the end, and drops native tools", () => {
    const scaffolded = withVerbatimScaffolding(request({ tools: [readFileTool], messages: dialogue }))
    assert.deepStrictEqual(scaffolded.tools, [])
    assert.deepStrictEqual(scaffolded.messages.map((message) => message.content.slice(0, 12)), [
      "[System: Too", "one", "two", nudge.slice(0, 12), "three", "four", "five"
    ])
    assert.include(scaffolded.messages[0]!.content, "read_file")
    assert.include(scaffolded.messages[0]!.content, JSON.stringify(readFileTool.parameters))
  })

  it("replays past calls as the text the model writes and results as user notes", () => {
    const scaffolded = withVerbatimScaffolding(request({
      tools: [readFileTool],
      messages: [userMessage("show it")],
      functionHistory: [{
        functionCall: { name: "read_file", args: { media_id: "m1" } },
        functionResponse: { name: "read_file", response: { result: { summary: "a cat" } } },
        preToolCallTextParts: [{ type: "text", text: "Opening it." }]
      }]
    }))
    assert.deepStrictEqual(scaffolded.functionHistory, [])
    assert.deepStrictEqual(scaffolded.messages.slice(-2).map((message) => [message.role, message.content]), [
      ["assistant", "Opening it.\n`read_file({\"media_id\":\"m1\"})`"],
      ["user", "[System: Result of read_file]\na cat"]
    ])
  })

  it("leaves a request without tools unchanged", () => {
    const plain = request({ messages: dialogue })
    assert.strictEqual(withVerbatimScaffolding(plain), plain)
  })
})

describe("verbatim tool calling over every provider", () => {
  const expected = [
    ProviderEvent.TextDelta({ text: "Sure: " }),
    ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m1" } } }),
    ProviderEvent.Finish({ reason: "tool_calls" })
  ]

  it.live("OpenAI-compatible: a text call reaches the loop exactly like a native one", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, toolCalling: "verbatim" }))
      server.enqueue(openAiStream([textChunk("Sure: ```json\nread_"), textChunk("file({\"media_id\":\"m1\"})\n```"), finishChunk("stop")]))
      const result = yield* collect(model, request({ tools: [readFileTool] }))
      assert.deepStrictEqual(withoutKeepAlives(result.events), expected)
      assert.isUndefined((server.requests[0]!.json as { tools?: unknown }).tools)
      // The same call made natively produces the same ToolCall event.
      const native = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }))
      server.enqueue(openAiStream([textChunk("Sure: "), toolCallChunk({ index: 0, name: "read_file", arguments: "{\"media_id\":\"m1\"}" }), finishChunk("tool_calls")]))
      assert.deepStrictEqual(withoutKeepAlives((yield* collect(native, request({ tools: [readFileTool] }))).events), expected)
    }))

  it.live("Anthropic and Gemini through the verbatim() Layer wrapper", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const anthropic = yield* buildModel(verbatim()(Anthropic.layer({ baseUrl: server.url })))
      server.enqueue(anthropicStream([
        messageStart(),
        ...textBlock(0, ["Sure: `read_file(", "\"m1\")`"]),
        messageDelta("end_turn", 3),
        messageStop()
      ]))
      const viaAnthropic = yield* collect(anthropic, request({ tools: [readFileTool] }))
      assert.deepStrictEqual(withoutKeepAlives(viaAnthropic.events).filter((event) => event._tag !== "Usage"), expected)
      assert.isUndefined((server.requests[0]!.json as { tools?: unknown }).tools)

      const gemini = yield* buildModel(Gemini.layer({ baseUrl: server.url, toolCalling: "verbatim" }))
      server.enqueue(geminiStream([geminiText("Sure: read_file({\"media_id\": \"m1\"}) and then"), geminiFinish("STOP")]))
      const viaGemini = yield* collect(gemini, request({ tools: [readFileTool] }))
      assert.deepStrictEqual(viaGemini.events, expected)
    }))
})
