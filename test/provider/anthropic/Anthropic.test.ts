import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Stream } from "effect"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import * as Anthropic from "../../../src/provider/anthropic/Anthropic"
import {
  anthropicStream,
  blockDelta,
  blockStart,
  errorEvent,
  messageDelta,
  messageStart,
  messageStop,
  ping,
  textBlock,
  thinkingBlock,
  toolUseBlock
} from "../../support/fakeProviders/anthropic"
import { fakeLlmServer, jsonResponse } from "../../support/fakeProviders/FakeLlmServer"
import { buildModel, collect, eventTags, readFileTool, request, withoutKeepAlives } from "../harness"

const setup = (options: Anthropic.AnthropicOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    // The request bodies asserted here are without cache breakpoints (promptCache.test.ts covers those).
    const model = yield* buildModel(Anthropic.layer({ baseUrl: server.url, promptCache: false, ...options }))
    return { server, model }
  })

const toolCallOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "ToolCall")
  return found?._tag === "ToolCall" ? found.call : undefined
}

describe("Anthropic Messages over loopback SSE", () => {
  it.live("streams thinking, text, a tool_use call, ping keep-alives, stop reason and usage", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(anthropicStream([
        messageStart(25),
        ping(),
        ...thinkingBlock(0, ["Need ", "the file."], "sig-123"),
        ...textBlock(1, ["Let me ", "look."]),
        ...toolUseBlock(2, { id: "toolu_01", name: "read_file" }, ["{\"media", "_id\": \"m1\"}"]),
        messageDelta("tool_use", 40),
        messageStop()
      ], { splitSizes: [11, 3, 64], crlf: true }))
      const result = yield* collect(model, request({ tools: [readFileTool] }))
      assert.isUndefined(result.error)
      assert.strictEqual(model.name, "anthropic")
      assert.deepStrictEqual(result.events, [
        ProviderEvent.KeepAlive(),
        ProviderEvent.ReasoningDelta({ text: "Need " }),
        ProviderEvent.ReasoningDelta({ text: "the file." }),
        ProviderEvent.TextDelta({ text: "Let me " }),
        ProviderEvent.TextDelta({ text: "look." }),
        // Usage first: the loop stops reading at the ToolCall.
        ProviderEvent.Usage({ usage: { inputTokens: 25, outputTokens: 40, totalTokens: 65 } }),
        ProviderEvent.ToolCall({
          call: {
            name: "read_file",
            args: { media_id: "m1" },
            id: "toolu_01",
            reasoningDetails: [{ type: "thinking", thinking: "Need the file.", signature: "sig-123" }]
          }
        }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v1/messages")
      assert.strictEqual(sent.headers["x-api-key"], "sk-test-key")
      assert.strictEqual(sent.headers["anthropic-version"], "2023-06-01")
      assert.isUndefined(sent.headers.authorization)
      const body = sent.json as Record<string, unknown>
      assert.strictEqual(body.max_tokens, 8192)
      assert.strictEqual(body.stream, true)
      assert.strictEqual(body.system, "You are loopcord.")
      assert.deepStrictEqual(body.tools, [{ name: "read_file", description: readFileTool.description, input_schema: readFileTool.parameters }])
    }))

  it.live("max_tokens cutting the tool input ⇒ repaired args marked truncated (spec §9)", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(anthropicStream([
        messageStart(),
        ...toolUseBlock(0, { id: "toolu_02", name: "update_memory" }, ["{\"a\": \"x\", ", "\"b\": \"cu"]),
        messageDelta("max_tokens", 8192),
        messageStop()
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(toolCallOf(result.events), { name: "update_memory", args: { a: "x" }, argumentsTruncated: true, id: "toolu_02" })
      assert.deepStrictEqual(result.events.find((event) => event._tag === "Finish"), ProviderEvent.Finish({ reason: "length" }))
    }))

  it.live("a tool without parameters (no input deltas) gets {}; a second tool_use is its own call", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(anthropicStream([
        messageStart(),
        ...toolUseBlock(0, { id: "toolu_a", name: "ping" }, []),
        ...toolUseBlock(1, { id: "toolu_b", name: "read_file" }, ["{\"media_id\":\"z\"}"]),
        messageDelta("tool_use", 9),
        messageStop()
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(result.events.filter((event) => event._tag === "ToolCall"), [
        ProviderEvent.ToolCall({ call: { name: "ping", args: {}, id: "toolu_a" } }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "z" }, id: "toolu_b" } })
      ])
    }))

  it.live("an error event mid-stream ⇒ typed error (overloaded ⇒ Server, rate limit ⇒ RateLimit)", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        anthropicStream([messageStart(), ...textBlock(0, ["par"]), errorEvent("overloaded_error", "Overloaded")]),
        anthropicStream([messageStart(), errorEvent("rate_limit_error", "Too many")])
      )
      const overloaded = yield* collect(model, request())
      assert.strictEqual(overloaded.text, "par")
      assert.strictEqual(overloaded.error?.reason, "Server")
      assert.include(overloaded.error!.detail, "Overloaded")
      assert.strictEqual((yield* collect(model, request())).error?.reason, "RateLimit")
    }))

  it.live("HTTP errors map through the shared table (529 overloaded ⇒ Server, 401 ⇒ Auth)", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        jsonResponse(529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, { "retry-after": "3" }),
        jsonResponse(401, { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } })
      )
      const overloaded = (yield* collect(model, request())).error
      assert.strictEqual(overloaded?.reason, "Server")
      assert.deepStrictEqual(overloaded?.retryAfter, Duration.seconds(3))
      const auth = (yield* collect(model, request())).error
      assert.strictEqual(auth?.reason, "Auth")
      assert.include(auth!.detail, "invalid x-api-key")
    }))

  it.live("a stream closed before message_stop and without a stop reason ⇒ Network", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(anthropicStream([messageStart(), blockStart(0, { type: "text", text: "" }), blockDelta(0, { type: "text_delta", text: "half" })]))
      const result = yield* collect(model, request())
      assert.strictEqual(result.text, "half")
      assert.strictEqual(result.error?.reason, "Network")
    }))

  it.live("unknown event and block types are ignored (forward compatible)", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(anthropicStream([
        messageStart(),
        { type: "some_future_event", detail: 1 },
        blockStart(0, { type: "server_tool_use", id: "srv", name: "web_search", input: {} }),
        blockDelta(0, { type: "citations_delta", citation: {} }),
        ...textBlock(1, ["ok"]),
        messageDelta("end_turn", 2),
        messageStop()
      ]))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(eventTags(withoutKeepAlives(result.events)), ["TextDelta", "Usage", "Finish"])
    }))

  it.live("interrupting the stream closes the socket on the server", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(anthropicStream([messageStart(), ...textBlock(0, ["hi"])], { after: "hang" }))
      const fiber = yield* model.stream(request()).pipe(Stream.runDrain, Effect.forkChild)
      const sent = yield* Effect.promise(() => server.request(0))
      yield* Effect.sleep(Duration.millis(30))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => sent.closed).pipe(Effect.timeout(Duration.seconds(2)))
      assert.isTrue(sent.isClosed())
    }))
})

describe("Anthropic history replay request body", () => {
  const history: ReadonlyArray<ToolHistoryEntry> = [
    {
      functionCall: {
        name: "fetch_url",
        args: { url: "https://example.org" },
        id: "toolu_abc",
        reasoningDetails: [
          { type: "thinking", thinking: "fetch it", signature: "sig" },
          { type: "reasoning.text", text: "openrouter-only" }
        ]
      },
      functionResponse: { name: "fetch_url", response: { result: { summary: "PAGE TEXT", status: "completed" } } },
      preToolCallTextParts: [{ type: "text", text: "Checking the page." }],
      imageMetadata: { imageUrls: [{ url: "data:image/png;base64,AAAA" }], totalSent: 1, totalValidated: 1 }
    },
    {
      functionCall: { name: "echo_tool", args: { text: "hi" }, id: "call_from_openai_9" },
      functionResponse: { name: "echo_tool", response: { result: { echoed: "hi" } } }
    }
  ]

  it.live("merges pre-tool text into the assistant turn, pairs tool_use/tool_result, prefers summaries, replays thinking", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ anthropicVersion: "2023-06-01", anthropicBeta: "some-beta" })
      server.enqueue(anthropicStream([messageStart(), ...textBlock(0, ["ok"]), messageDelta("end_turn", 1), messageStop()]))
      yield* collect(model, request({
        messages: [
          { role: "user", content: "hi", name: "Ana", images: [{ url: "https://cdn.example.org/a.png" }] },
          { role: "system", content: "[System: note]" }
        ],
        functionHistory: history,
        assistantPrefill: "So far  ",
        temperature: 1.4,
        maxOutputTokens: 1000
      }))
      const sent = server.requests[0]!
      assert.strictEqual(sent.headers["anthropic-beta"], "some-beta")
      const body = sent.json as Record<string, unknown>
      assert.strictEqual(body.temperature, 1)
      assert.strictEqual(body.max_tokens, 1000)
      assert.deepStrictEqual(body.messages, [
        {
          role: "user",
          content: [
            { type: "text", text: "Ana: hi" },
            { type: "image", source: { type: "url", url: "https://cdn.example.org/a.png" } },
            { type: "text", text: "[System: note]" }
          ]
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "fetch it", signature: "sig" },
            { type: "text", text: "Checking the page." },
            { type: "tool_use", id: "toolu_abc", name: "fetch_url", input: { url: "https://example.org" } }
          ]
        },
        {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_abc",
            content: [
              { type: "text", text: "PAGE TEXT" },
              { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }
            ]
          }]
        },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "call_from_openai_9", name: "echo_tool", input: { text: "hi" } }]
        },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_from_openai_9", content: "{\"echoed\":\"hi\"}" }] },
        { role: "assistant", content: [{ type: "text", text: "So far" }] }
      ])
    }))
})
