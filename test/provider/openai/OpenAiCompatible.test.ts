import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Deferred, Duration, Effect, Fiber, Layer, Logger, Option, References, Stream } from "effect"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import * as OpenAiCompatible from "../../../src/provider/openai/OpenAiCompatible"
import { fakeLlmServer, jsonResponse, startFakeLlmServer } from "../../support/fakeProviders/FakeLlmServer"
import {
  chunk,
  finishChunk,
  openAiStream,
  openAiTranscript,
  textChunk,
  toolCallChunk,
  usageChunk
} from "../../support/fakeProviders/openAiCompatible"
import { buildModel, collect, eventTags, HttpLive, httpClients, readFileTool, request, userMessage, withoutKeepAlives } from "../harness"

const setup = (options: OpenAiCompatible.OpenAiCompatibleOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, ...options }))
    return { server, model }
  })

/** Waits for a promise with a real-time bound, so a failure is a clear assertion, not a hung test. */
const within = <A>(promise: Promise<A>, ms: number, what: string) =>
  Effect.promise(() => promise).pipe(
    Effect.timeoutOrElse({ duration: Duration.millis(ms), orElse: () => Effect.fail(new Error(`timed out waiting for ${what}`)) })
  )

const toolCallOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "ToolCall")
  return found?._tag === "ToolCall" ? found.call : undefined
}

describe("OpenAiCompatible: streaming over loopback", () => {
  it.live("streams text, one tool call accumulated by index, finish and the final usage chunk", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([
        textChunk("Let me "),
        textChunk("look."),
        toolCallChunk({ index: 0, id: "call_1", name: "read_", arguments: "{\"media" }),
        toolCallChunk({ index: 0, name: "file", arguments: "_id\":\"m1\"}" }),
        finishChunk("tool_calls"),
        usageChunk(12, 7)
      ], { splitSizes: [7, 13, 1, 50], crlf: true }))
      const result = yield* collect(model, request({ tools: [readFileTool] }))
      assert.isUndefined(result.error)
      assert.strictEqual(model.name, "openai-compatible")
      assert.deepStrictEqual(withoutKeepAlives(result.events), [
        ProviderEvent.TextDelta({ text: "Let me " }),
        ProviderEvent.TextDelta({ text: "look." }),
        // The call waits for the end of the stream, so the usage chunk after the finish comes first.
        ProviderEvent.Usage({ usage: { inputTokens: 12, outputTokens: 7, totalTokens: 19 } }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m1" }, id: "call_1" } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v1/chat/completions")
      assert.strictEqual(sent.headers.authorization, "Bearer sk-test-key")
      const body = sent.json as Record<string, unknown>
      assert.strictEqual(body.stream, true)
      assert.deepStrictEqual(body.stream_options, { include_usage: true })
      assert.deepStrictEqual(body.tools, [{ type: "function", function: { name: "read_file", description: readFileTool.description, parameters: readFileTool.parameters } }])
    }))

  it.live("comments and keep-alives become KeepAlive events; multi-line data lines are joined", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      const multiLine = JSON.stringify(textChunk("two-line")).replace("\"choices\":", "\"choices\":\n")
      server.enqueue(openAiStream([
        { comment: "OPENROUTER PROCESSING" },
        { comment: "keep-alive" },
        { data: multiLine },
        finishChunk("stop")
      ], { splitSizes: [3], crlf: true }))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(eventTags(result.events), ["KeepAlive", "KeepAlive", "TextDelta", "Finish"])
      assert.strictEqual(result.text, "two-line")
    }))

  it.live("frames cut at every byte and UTF-8 characters cut across writes decode the same", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      const text = openAiTranscript([textChunk("héllo "), textChunk("wörld 😀"), finishChunk("stop")])
      const bytes = Buffer.from(text, "utf8")
      server.enqueue({ parts: [...bytes].map((byte) => ({ write: Uint8Array.of(byte) })) })
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.strictEqual(result.text, "héllo wörld 😀")
    }))

  it.live("reasoning_content (DeepSeek) and reasoning_details (OpenRouter) are emitted and kept on the call", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([
        chunk({ reasoning_content: "I need " }),
        chunk({ reasoning_content: "the file." }),
        chunk({ reasoning: "plan", reasoning_details: [{ type: "reasoning.text", text: "plan", index: 0, format: "x" }] }),
        chunk({ reasoning_details: [{ type: "reasoning.text", text: " more", index: 0, signature: "sig" }] }),
        toolCallChunk({ index: 0, id: "call_9", name: "read_file", arguments: "{\"media_id\":\"a\"}" }),
        finishChunk("tool_calls")
      ]))
      const result = yield* collect(model, request({ tools: [readFileTool] }))
      const reasoning = result.events.flatMap((event) => (event._tag === "ReasoningDelta" ? [event.text] : []))
      assert.deepStrictEqual(reasoning, ["I need ", "the file.", "plan", " more"])
      const call = toolCallOf(result.events)
      assert.strictEqual(call?.reasoningContent, "I need the file.")
      assert.deepStrictEqual(call?.reasoningDetails, [{ type: "reasoning.text", text: "plan more", index: 0, format: "x", signature: "sig" }])
    }))

  it.live("every call of a pass is emitted, in index order; the next pass is not contaminated", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        openAiStream([
          toolCallChunk({ index: 0, id: "call_a", name: "read_file", arguments: "{\"media_id\":" }),
          toolCallChunk({ index: 1, id: "call_b", name: "generate_image", arguments: "{}" }),
          toolCallChunk({ index: 0, arguments: "\"x\"}" }),
          finishChunk("tool_calls")
        ]),
        openAiStream([toolCallChunk({ index: 0, id: "call_c", name: "ping", arguments: "{}" }), finishChunk("tool_calls")])
      )
      const first = yield* collect(model, request({ tools: [readFileTool] }))
      assert.deepStrictEqual(first.events.filter((event) => event._tag === "ToolCall"), [
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "x" }, id: "call_a" } }),
        ProviderEvent.ToolCall({ call: { name: "generate_image", args: {}, id: "call_b" } })
      ])
      const second = yield* collect(model, request({ tools: [readFileTool] }))
      assert.deepStrictEqual(toolCallOf(second.events), { name: "ping", args: {}, id: "call_c" })
    }))

  it.live("a server that ignores stream:true and answers one JSON completion still works", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(jsonResponse(200, {
        id: "x",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: "whole answer" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 }
      }))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(result.events, [
        ProviderEvent.TextDelta({ text: "whole answer" }),
        ProviderEvent.Usage({ usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 } }),
        ProviderEvent.Finish({ reason: "stop" })
      ])
    }))

  it.live("usage sent in the finishing chunk (DeepSeek) comes before the ToolCall, where the loop stops reading", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([
        toolCallChunk({ index: 0, id: "call_u", name: "ping", arguments: "{}" }),
        { ...finishChunk("tool_calls"), usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 } }
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(eventTags(result.events), ["Usage", "ToolCall", "Finish"])
    }))

  it.live("a held call is released when the body closes after the finish without [DONE]", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([toolCallChunk({ index: 0, id: "call_z", name: "ping", arguments: "{}" }), finishChunk("tool_calls")], { omitDone: true }))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(eventTags(result.events), ["ToolCall", "Finish"])
    }))

  it.live("[DONE] without a finish reason ends cleanly with a synthesized stop", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([textChunk("ok")]))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(eventTags(result.events), ["TextDelta", "Finish"])
    }))

  it.live("a finish reason without [DONE] before the body closes is a clean end", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([textChunk("ok"), finishChunk("stop")], { omitDone: true }))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(eventTags(result.events), ["TextDelta", "Finish"])
    }))
})

describe("OpenAiCompatible: truncated tool arguments (spec §9)", () => {
  const passWith = (pieces: ReadonlyArray<string>, finish: string, options: OpenAiCompatible.OpenAiCompatibleOptions = {}) =>
    Effect.gen(function*() {
      const { model, server } = yield* setup(options)
      server.enqueue(openAiStream([
        ...pieces.map((piece, index) =>
          toolCallChunk(index === 0 ? { index: 0, id: "call_t", name: "update_memory", arguments: piece } : { index: 0, arguments: piece })
        ),
        finishChunk(finish)
      ]))
      const logs: Array<string> = []
      const logger = Logger.make(({ fiber, logLevel, message }) => {
        logs.push(`${logLevel.toUpperCase()} ${String(message)} ${JSON.stringify(fiber.getRef(References.CurrentLogAnnotations))}`)
      })
      const result = yield* collect(model, request()).pipe(Effect.provide(Logger.layer([logger])))
      return { call: toolCallOf(result.events), result, logs }
    })

  it.live("[114] complete streamed args are parsed and not marked", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith(["{\"summary\": ", "\"they moved\"}"], "tool_calls")
      assert.deepStrictEqual(call?.args, { summary: "they moved" })
      assert.isUndefined(call?.argumentsTruncated)
    }))

  it.live("[115] args cut mid-string are repaired and marked, with the tool_arguments_truncated log line", () =>
    Effect.gen(function*() {
      const { call, logs } = yield* passWith(["{\"a\":\"x\",", "\"b\":\"cut"], "length")
      assert.deepStrictEqual(call?.args, { a: "x" })
      assert.isTrue(call?.argumentsTruncated)
      const line = logs.find((entry) => entry.includes("tool_arguments_truncated"))
      assert.isDefined(line)
      assert.include(line!, "ERROR")
      assert.include(line!, "\"adapter\":\"openai-compatible\"")
      assert.include(line!, "\"tool_name\":\"update_memory\"")
      assert.include(line!, "\"recovered_keys\":\"a\"")
      assert.include(line!, "\"argument_chars\":17")
    }))

  it.live("[115] malformed args ({\"a\": }) become {} and are not marked", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith(["{\"a\": }"], "tool_calls")
      assert.deepStrictEqual(call?.args, {})
      assert.isUndefined(call?.argumentsTruncated)
    }))

  it.live("[116] a number at the very end is dropped", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith(["{\"a\":\"x\",\"n\":123", "45"], "length")
      assert.deepStrictEqual(call?.args, { a: "x" })
      assert.isTrue(call?.argumentsTruncated)
    }))

  it.live("[117] a name split across deltas is accumulated; the next call starts clean", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        openAiStream([
          toolCallChunk({ index: 0, id: "call_1", name: "update_", arguments: "{\"category\":\"mood\"," }),
          toolCallChunk({ index: 0, name: "short_term_memory", arguments: "\"value\":\"hap" }),
          finishChunk("length")
        ]),
        openAiStream([
          toolCallChunk({ index: 0, id: "call_2", name: "update_short_term_memory", arguments: "{\"category\":\"plan\"}" }),
          finishChunk("tool_calls")
        ])
      )
      const first = toolCallOf((yield* collect(model, request())).events)
      assert.deepStrictEqual(first, { name: "update_short_term_memory", args: { category: "mood" }, argumentsTruncated: true, id: "call_1" })
      const second = toolCallOf((yield* collect(model, request())).events)
      assert.deepStrictEqual(second, { name: "update_short_term_memory", args: { category: "plan" }, id: "call_2" })
    }))

  it.live("[118][issue 25] a payload longer than BOT_JSON_REPAIR_MAX_CHARS is never repaired: the call is cut at the cap and refused as truncated", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith(["{\"a\":\"x\",\"b\":\"", "y".repeat(3000)], "tool_calls", { jsonRepairMaxChars: 2048 })
      assert.deepStrictEqual(call?.args, {})
      assert.isTrue(call?.argumentsTruncated)
    }))

  it.live("[118] a complete payload within BOT_JSON_REPAIR_MAX_CHARS is parsed as it is", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith(["{\"a\":\"x\",\"b\":\"", "y".repeat(1500), "\"}"], "tool_calls", { jsonRepairMaxChars: 2048 })
      assert.deepStrictEqual(call?.args, { a: "x", b: "y".repeat(1500) })
      assert.isUndefined(call?.argumentsTruncated)
    }))

  it.live("finish `length` relabelled `tool_calls` with unterminated args is still caught", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith(["{\"query\":\"weather in", " Par"], "tool_calls")
      assert.deepStrictEqual(call?.args, {})
      assert.isTrue(call?.argumentsTruncated)
    }))

  it.live("a call cut before any argument under finish `length` is refused as truncated", () =>
    Effect.gen(function*() {
      const { call } = yield* passWith([""], "length")
      assert.deepStrictEqual(call?.args, {})
      assert.isTrue(call?.argumentsTruncated)
    }))
})

describe("OpenAiCompatible: history replay request body", () => {
  const history: ReadonlyArray<ToolHistoryEntry> = [
    {
      functionCall: {
        name: "fetch_url",
        args: { url: "https://example.org" },
        id: "call_abc",
        reasoningContent: "I should fetch it.",
        reasoningDetails: [
          { type: "reasoning.text", text: "fetch", index: 0 },
          { type: "thinking", thinking: "anthropic-only", signature: "s" }
        ]
      },
      functionResponse: {
        name: "fetch_url",
        response: { result: { summary: "**URL:** https://example.org\n\nPage", status: "completed", contentLength: 4 } }
      },
      preToolCallTextParts: [{ type: "text", text: "Let me check that page." }],
      imageMetadata: { imageUrls: [{ url: "https://cdn.example.org/1.png" }], totalSent: 1, totalValidated: 1 }
    },
    {
      functionCall: { name: "echo_tool", args: { text: "hello" } },
      functionResponse: { name: "echo_tool", response: { result: { echoed: "hello" } } }
    },
    {
      functionCall: { name: "update_memory" },
      functionResponse: {
        name: "update_memory",
        response: { result: { status: "tool_execution_failed", reason: "truncated", tool_name: "update_memory" } }
      },
      preToolCallTextParts: [{ type: "text", text: "   " }]
    }
  ]

  it.live("replays context, merged pre-tool text, calls, preferred summaries, reasoning, images and the prefill", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ maxTokensParameter: "max_completion_tokens", extraBody: { provider: { sort: "price" } } })
      server.enqueue(openAiStream([textChunk("continued"), finishChunk("stop")]))
      yield* collect(model, request({
        messages: [
          { role: "user", content: "look at this", name: "Ana María!", images: [{ url: "https://cdn.example.org/in.png" }] },
          { role: "assistant", content: "Sure.", name: "Tomori" },
          { role: "system", content: "[System: note]" }
        ],
        functionHistory: history,
        assistantPrefill: "Partial answer",
        temperature: 0.7,
        maxOutputTokens: 500
      }))
      const body = server.requests[0]!.json as Record<string, unknown>
      assert.strictEqual(body.model, "fake-model")
      assert.strictEqual(body.temperature, 0.7)
      assert.strictEqual(body.max_completion_tokens, 500)
      assert.deepStrictEqual(body.provider, { sort: "price" })
      assert.isUndefined(body.tools)
      assert.deepStrictEqual(body.messages, [
        { role: "system", content: "You are loopcord." },
        {
          role: "user",
          name: "Ana_Maria",
          content: [
            { type: "text", text: "look at this" },
            { type: "image_url", image_url: { url: "https://cdn.example.org/in.png" } }
          ]
        },
        { role: "assistant", name: "Tomori", content: "Sure." },
        { role: "system", content: "[System: note]" },
        {
          role: "assistant",
          content: "Let me check that page.",
          tool_calls: [{ id: "call_abc", type: "function", function: { name: "fetch_url", arguments: "{\"url\":\"https://example.org\"}" } }],
          reasoning_content: "I should fetch it.",
          reasoning_details: [{ type: "reasoning.text", text: "fetch", index: 0 }]
        },
        { role: "tool", tool_call_id: "call_abc", content: "**URL:** https://example.org\n\nPage" },
        {
          role: "user",
          content: [
            { type: "text", text: "[Images returned by the fetch_url tool]" },
            { type: "image_url", image_url: { url: "https://cdn.example.org/1.png" } }
          ]
        },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_2", type: "function", function: { name: "echo_tool", arguments: "{\"text\":\"hello\"}" } }]
        },
        { role: "tool", tool_call_id: "call_2", content: "{\"echoed\":\"hello\"}" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "call_3", type: "function", function: { name: "update_memory", arguments: "{}" } }]
        },
        {
          role: "tool",
          tool_call_id: "call_3",
          content: "{\"status\":\"tool_execution_failed\",\"reason\":\"truncated\",\"tool_name\":\"update_memory\"}"
        },
        { role: "assistant", content: "Partial answer" }
      ])
    }))

  it.live("no API key ⇒ no Authorization header (local servers)", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ headers: { "x-title": "loopcord" } })
      server.enqueue(openAiStream([textChunk("hi"), finishChunk("stop")]))
      yield* collect(model, request({ apiKey: undefined, system: "" }))
      assert.isUndefined(server.requests[0]!.headers.authorization)
      assert.strictEqual(server.requests[0]!.headers["x-title"], "loopcord")
      assert.deepStrictEqual((server.requests[0]!.json as { messages: unknown }).messages, [{ role: "user", content: "hello" }])
    }))
})

describe("OpenAiCompatible: errors are typed ProviderErrors, never thrown", () => {
  const errorFor = (response: Parameters<typeof jsonResponse>) =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(jsonResponse(...response))
      return (yield* collect(model, request())).error
    })

  it.live("401 and 403 ⇒ Auth, 402 ⇒ Auth, with the vendor's message", () =>
    Effect.gen(function*() {
      const unauthorized = yield* errorFor([401, { error: { message: "Incorrect API key provided", type: "invalid_request_error" } }])
      assert.strictEqual(unauthorized?.reason, "Auth")
      assert.strictEqual(unauthorized?.status, 401)
      assert.strictEqual(unauthorized?.provider, "openai-compatible")
      assert.include(unauthorized!.detail, "Incorrect API key provided")
      assert.strictEqual((yield* errorFor([403, { error: { message: "forbidden" } }]))?.reason, "Auth")
      assert.strictEqual((yield* errorFor([402, { error: { code: 402, message: "Insufficient credits" } }]))?.reason, "Auth")
    }))

  it.live("429 ⇒ RateLimit carrying Retry-After (seconds and retry-after-ms)", () =>
    Effect.gen(function*() {
      const seconds = yield* errorFor([429, { error: { message: "slow down" } }, { "retry-after": "7" }])
      assert.strictEqual(seconds?.reason, "RateLimit")
      assert.deepStrictEqual(seconds?.retryAfter, Duration.seconds(7))
      const millis = yield* errorFor([429, { error: { message: "slow down" } }, { "retry-after-ms": "1500" }])
      assert.deepStrictEqual(millis?.retryAfter, Duration.millis(1500))
    }))

  it.live("5xx ⇒ Server, 400/404 ⇒ BadRequest, OpenRouter's upstream detail kept", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* errorFor([500, { error: { message: "boom" } }]))?.reason, "Server")
      assert.strictEqual((yield* errorFor([503, { error: { message: "overloaded" } }]))?.reason, "Server")
      const bad = yield* errorFor([400, { error: { message: "Provider returned error", code: 400, metadata: { raw: "context too long" } } }])
      assert.strictEqual(bad?.reason, "BadRequest")
      assert.include(bad!.detail, "context too long")
      assert.strictEqual((yield* errorFor([404, { error: { message: "model not found" } }]))?.reason, "BadRequest")
    }))

  it.live("a 502 HTML page from a proxy ⇒ Server with a readable snippet", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue({ status: 502, headers: { "content-type": "text/html" }, parts: [{ write: "<html><body><h1>502 Bad Gateway</h1></body></html>" }] })
      const error = (yield* collect(model, request())).error
      assert.strictEqual(error?.reason, "Server")
      assert.include(error!.detail, "502 Bad Gateway")
    }))

  it.live("a 200 with an HTML body ⇒ InvalidResponse", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, parts: [{ write: "<!doctype html><title>Login</title>" }] })
      const result = yield* collect(model, request())
      assert.strictEqual(result.error?.reason, "InvalidResponse")
      assert.include(result.error!.detail, "text/html")
      assert.deepStrictEqual(result.events, [])
    }))

  it.live("an {\"error\":…} event mid-stream ⇒ typed error after the text already streamed", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([
        textChunk("partial "),
        { ...chunk({}, "error"), error: { code: 429, message: "Rate limit exceeded upstream" } }
      ]))
      const result = yield* collect(model, request())
      assert.strictEqual(result.text, "partial ")
      assert.strictEqual(result.error?.reason, "RateLimit")
      assert.include(result.error!.detail, "Rate limit exceeded upstream")
    }))

  it.live("invalid JSON in a data line ⇒ InvalidResponse after the events before it", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([textChunk("a"), { data: "{not json" }, textChunk("b")]))
      const result = yield* collect(model, request())
      assert.strictEqual(result.text, "a")
      assert.strictEqual(result.error?.reason, "InvalidResponse")
      assert.include(result.error!.detail, "{not json")
    }))

  it.live("JSON of the wrong shape (a field of the wrong type) ⇒ InvalidResponse; unknown fields are ignored", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      const wrong: ReadonlyArray<unknown> = [
        { choices: [{ index: 0, delta: { content: 42 } }] },
        { choices: { 0: { delta: { content: "x" } } } },
        { choices: [{ delta: { tool_calls: [{ index: "0", function: { name: "f" } }] } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: {} } }] } }] },
        { choices: [{ finish_reason: 1 }] },
        { usage: { prompt_tokens: "10" } },
        ["not", "an", "object"]
      ]
      for (const body of wrong) {
        server.enqueue(openAiStream([textChunk("a"), { data: JSON.stringify(body) }, textChunk("b")]))
        const result = yield* collect(model, request())
        assert.strictEqual(result.text, "a", JSON.stringify(body))
        assert.strictEqual(result.error?.reason, "InvalidResponse", JSON.stringify(body))
        assert.include(result.error!.detail, "unexpected shape")
      }
      server.enqueue(openAiStream([
        { ...textChunk("kept"), system_fingerprint: "fp", choices: [{ index: 0, delta: { content: "kept", refusal: null, extra: { nested: true } }, logprobs: null, finish_reason: null }] },
        { choices: [{ index: 0, delta: {}, finish_reason: "stop" }], usage: null }
      ]))
      const lenient = yield* collect(model, request())
      assert.strictEqual(lenient.text, "kept")
      assert.strictEqual(lenient.error, undefined)
    }))

  it.live("garbage that is not SSE at all ⇒ InvalidResponse; a body closed mid-answer ⇒ Network", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue({ parts: [{ write: "hello world\nthis is not an event stream\n" }] })
      assert.strictEqual((yield* collect(model, request())).error?.reason, "InvalidResponse")
      server.enqueue(openAiStream([textChunk("cut")], { omitDone: true }))
      const cut = yield* collect(model, request())
      assert.strictEqual(cut.text, "cut")
      assert.strictEqual(cut.error?.reason, "Network")
      assert.include(cut.error!.detail, "ended before the provider finished")
    }))

  it.live("the connection dropped mid-stream ⇒ Network", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(openAiStream([textChunk("so far")], { omitDone: true, after: "destroy" }))
      const result = yield* collect(model, request())
      assert.strictEqual(result.text, "so far")
      assert.strictEqual(result.error?.reason, "Network")
    }))

  it.live("connection refused ⇒ Network", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(() => startFakeLlmServer())
      yield* Effect.promise(() => closed.close())
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${closed.url}/v1` }))
      const error = (yield* collect(model, request())).error
      assert.strictEqual(error?.reason, "Network")
      assert.include(error!.message, "openai-compatible Network")
    }))
})

describe.each(httpClients)("OpenAiCompatible: interruption aborts the HTTP request (%s client)", (_, http) => {
  const setupWith = Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }), http)
    return { server, model }
  })

  it.live("killing the stream mid-answer closes the socket on the server", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setupWith
      server.enqueue(openAiStream([textChunk("first words")], { omitDone: true, after: "hang" }))
      const seen: Array<string> = []
      const firstText = yield* Deferred.make<void>()
      const fiber = yield* model.stream(request()).pipe(
        Stream.runForEach((event) =>
          Effect.andThen(Effect.sync(() => seen.push(event._tag)), event._tag === "TextDelta" ? Deferred.succeed(firstText, undefined) : Effect.void)),
        Effect.forkChild
      )
      const sent = yield* within(server.request(0), 5000, "the request")
      // Mid-answer: the text arrived and the stream is waiting for more (the server hangs).
      yield* Deferred.await(firstText).pipe(Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new Error("no text arrived")) }))
      assert.deepStrictEqual(seen.filter((tag) => tag !== "KeepAlive"), ["TextDelta"])
      assert.isFalse(sent.isClosed())
      yield* Fiber.interrupt(fiber)
      yield* within(sent.closed, 2000, "the socket to close")
      assert.isTrue(sent.isClosed())
    }))

  it.live("a response that never starts can be interrupted, and the socket closes", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setupWith
      server.enqueue({ neverRespond: true, parts: [] })
      const fiber = yield* model.stream(request()).pipe(Stream.runDrain, Effect.forkChild)
      const sent = yield* within(server.request(0), 5000, "the request")
      const exit = yield* Fiber.interrupt(fiber).pipe(Effect.timeoutOption(Duration.seconds(2)))
      assert.isTrue(Option.isSome(exit))
      yield* within(sent.closed, 2000, "the socket to close")
    }))
})

describe("OpenAiCompatible.layerConfig", () => {
  it.live("reads LLM_BASE_URL and LLM_TOOL_CALLING=verbatim: no native tools, calls parsed from text", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_BASE_URL", `${server.url}/v1`], ["LLM_TOOL_CALLING", "verbatim"]]) })
      const model = yield* buildModel(OpenAiCompatible.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config))))
      server.enqueue(openAiStream([textChunk("Reading: `read_fi"), textChunk("le(\"m7\")`"), finishChunk("stop")]))
      const result = yield* collect(model, request({ tools: [readFileTool], messages: [userMessage("show m7")] }))
      assert.deepStrictEqual(withoutKeepAlives(result.events), [
        ProviderEvent.TextDelta({ text: "Reading: " }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m7" } } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
      const body = server.requests[0]!.json as { tools?: unknown; messages: ReadonlyArray<{ role: string; content: string }> }
      assert.isUndefined(body.tools)
      assert.include(body.messages[1]!.content, "read_file")
      assert.include(body.messages[1]!.content, "\"media_id\"")
    }))

  it.effect("a bad LLM_TOOL_CALLING fails at start-up naming the variable", () =>
    Effect.gen(function*() {
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_TOOL_CALLING", "sometimes"]]) })
      const error = yield* Layer.build(Layer.provide(OpenAiCompatible.layerConfig(), HttpLive)).pipe(
        Effect.provide(ConfigProvider.layer(config)),
        Effect.scoped,
        Effect.flip
      )
      assert.include(String(error), "LLM_TOOL_CALLING")
    }))
})
