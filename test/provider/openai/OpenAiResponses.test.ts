import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Fiber, Layer, Option, Stream } from "effect"
import fc from "fast-check"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import { ProviderConfig } from "../../../src/config/ProviderConfig"
import { routePlanLayer } from "../../../src/loop/RoutePlan"
import { runGenerationTurn } from "../../../src/loop/generationTurn"
import { KeyPool } from "../../../src/loop/KeyPool"
import { layerConfigFor } from "../../../src/provider/httpProviders"
import * as OpenAiResponses from "../../../src/provider/openai/OpenAiResponses"
import { makeResponsesDecoder } from "../../../src/provider/openai/responsesDecoder"
import { decodeSseBytes } from "../../../src/provider/sse/Sse"
import { invalidResponse } from "../../../src/provider/providerErrors"
import { withLoopHarness } from "../../loop/harness"
import { fakeLlmServer, jsonResponse } from "../../support/fakeProviders/FakeLlmServer"
import {
  completed,
  created,
  errorEvent,
  failed,
  functionCallItem,
  incomplete,
  inProgress,
  messageItem,
  reasoningItem,
  responsesStream,
  responsesTranscript,
  responsesUsage
} from "../../support/fakeProviders/openAiResponses"
import { echoTool } from "../../support/tools/testTools"
import { buildModel, collect, HttpLive, readFileTool, request, userMessage, withoutKeepAlives } from "../harness"

const setup = (options: OpenAiResponses.OpenAiResponsesOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    const model = yield* buildModel(OpenAiResponses.layer({ baseUrl: `${server.url}/v1`, ...options }))
    return { server, model }
  })

const toolCallOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "ToolCall")
  return found?._tag === "ToolCall" ? found.call : undefined
}

const finishOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "Finish")
  return found?._tag === "Finish" ? found.reason : undefined
}

describe("OpenAiResponses: streaming over loopback", () => {
  it.live("text deltas, reasoning summary, function-call argument deltas by item id, usage with cached and reasoning tokens", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(responsesStream([
        created(),
        inProgress(),
        ...reasoningItem("rs_1", ["Need ", "the file."], { encrypted: "gAAAAenc1" }),
        ...messageItem("msg_1", ["Let me ", "look."], 1),
        ...functionCallItem({ id: "fc_1", callId: "call_abc", name: "read_file" }, ["{\"media", "_id\":\"m1\"}"], { outputIndex: 2 }),
        completed({ usage: responsesUsage(2006, 300, { cached: 1920, reasoning: 256 }) })
      ], { splitSizes: [7, 13, 1, 50], crlf: true }))
      const result = yield* collect(model, request({ tools: [readFileTool] }))
      assert.isUndefined(result.error)
      assert.strictEqual(model.name, "openai-responses")
      assert.deepStrictEqual(withoutKeepAlives(result.events), [
        ProviderEvent.ReasoningDelta({ text: "Need " }),
        ProviderEvent.ReasoningDelta({ text: "the file." }),
        ProviderEvent.TextDelta({ text: "Let me " }),
        ProviderEvent.TextDelta({ text: "look." }),
        ProviderEvent.Usage({
          usage: { inputTokens: 2006, outputTokens: 300, totalTokens: 2306, cachedInputTokens: 1920, reasoningTokens: 256 }
        }),
        ProviderEvent.ToolCall({
          call: {
            name: "read_file",
            args: { media_id: "m1" },
            id: "call_abc",
            reasoningDetails: [{ type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "Need the file." }], encrypted_content: "gAAAAenc1" }]
          }
        }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v1/responses")
      assert.strictEqual(sent.headers.authorization, "Bearer sk-test-key")
      const body = sent.json as Record<string, unknown>
      assert.strictEqual(body.stream, true)
      assert.strictEqual(body.store, false)
      assert.deepStrictEqual(body.include, ["reasoning.encrypted_content"])
      assert.strictEqual(body.instructions, "You are loopcord.")
      assert.deepStrictEqual(body.input, [{ role: "user", content: "hello" }])
      assert.deepStrictEqual(body.tools, [{
        type: "function",
        name: "read_file",
        description: readFileTool.description,
        parameters: readFileTool.parameters,
        strict: false
      }])
    }))

  it.live("argument deltas of a second call (another item id) never leak into the first; both are emitted, in output order", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      const first = functionCallItem({ id: "fc_a", callId: "call_a", name: "read_file" }, ["{\"media_id\":", "\"a\"}"])
      const second = functionCallItem({ id: "fc_b", callId: "call_b", name: "generate_image" }, ["{\"prompt\":", "\"cat\"}"], { outputIndex: 1 })
      // Interleaved: a's added, b's added, then the deltas alternate.
      server.enqueue(responsesStream([
        created(),
        first[0]!,
        second[0]!,
        first[1]!,
        second[1]!,
        first[2]!,
        second[2]!,
        ...first.slice(3),
        ...second.slice(3),
        completed({ usage: responsesUsage(5, 5) })
      ]))
      const result = yield* collect(model, request({ tools: [readFileTool] }))
      assert.deepStrictEqual(result.events.filter((event) => event._tag === "ToolCall"), [
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "a" }, id: "call_a" } }),
        ProviderEvent.ToolCall({ call: { name: "generate_image", args: { prompt: "cat" }, id: "call_b" } })
      ])
    }))

  it.live("a reasoning item without content is neither shown nor replayed; a summary without deltas is shown once", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(responsesStream([
        created(),
        ...reasoningItem("rs_empty", []),
        // Summary only on the finished item (no summary deltas streamed), and no encryption.
        { type: "response.output_item.added", output_index: 1, item: { id: "rs_late", type: "reasoning", summary: [] } },
        { type: "response.output_item.done", output_index: 1, item: { id: "rs_late", type: "reasoning", summary: [{ type: "summary_text", text: "Thought once." }] } },
        ...functionCallItem({ id: "fc_1", callId: "call_1", name: "read_file" }, ["{}"], { outputIndex: 2 }),
        completed({
          usage: responsesUsage(3, 3),
          output: [
            { id: "rs_empty", type: "reasoning", summary: [] },
            { id: "rs_late", type: "reasoning", summary: [{ type: "summary_text", text: "Thought once." }] },
            { id: "fc_1", type: "function_call", call_id: "call_1", name: "read_file", arguments: "{}", status: "completed" }
          ]
        })
      ]))
      const result = yield* collect(model, request())
      assert.isUndefined(result.error)
      assert.deepStrictEqual(result.events.filter((event) => event._tag === "ReasoningDelta"), [ProviderEvent.ReasoningDelta({ text: "Thought once." })])
      assert.deepStrictEqual(toolCallOf(result.events), { name: "read_file", args: {}, id: "call_1" }, "nothing encrypted: nothing to replay")
    }))

  it.live("a text answer finishes stop; output_text only on the finished item (no deltas) is still the answer", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        responsesStream([created(), ...messageItem("msg_1", ["Hi ", "there."]), completed({ usage: responsesUsage(4, 2) })]),
        responsesStream([
          created(),
          { type: "response.output_item.done", output_index: 0, item: { id: "msg_2", type: "message", role: "assistant", content: [{ type: "output_text", text: "Whole.", annotations: [] }] } },
          completed()
        ])
      )
      const streamed = yield* collect(model, request())
      assert.strictEqual(streamed.text, "Hi there.")
      assert.strictEqual(finishOf(streamed.events), "stop")
      const whole = yield* collect(model, request())
      assert.strictEqual(whole.text, "Whole.")
      assert.isUndefined(whole.error)
    }))
})

describe("OpenAiResponses: incomplete responses and truncated arguments (spec §9)", () => {
  it.live("incomplete with max_output_tokens cutting the arguments ⇒ repaired args marked truncated, finish length", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        responsesStream([
          created(),
          ...messageItem("msg_1", ["Saving. "]),
          ...functionCallItem({ id: "fc_1", callId: "call_1", name: "update_memory" }, ["{\"a\": \"x\", ", "\"b\": \"cu"], { outputIndex: 1, cut: true }),
          incomplete("max_output_tokens", { usage: responsesUsage(10, 64) })
        ]),
        responsesStream([
          created(),
          ...functionCallItem({ id: "fc_2", callId: "call_2", name: "update_memory" }, [], { cut: true }),
          incomplete("max_output_tokens")
        ]),
        responsesStream([created(), ...messageItem("msg_3", ["Some of it"]), incomplete("content_filter")])
      )
      const cut = yield* collect(model, request())
      assert.strictEqual(cut.text, "Saving. ")
      assert.deepStrictEqual(toolCallOf(cut.events), { name: "update_memory", args: { a: "x" }, argumentsTruncated: true, id: "call_1" })
      assert.strictEqual(finishOf(cut.events), "length")
      const empty = yield* collect(model, request())
      assert.deepStrictEqual(toolCallOf(empty.events), { name: "update_memory", args: {}, argumentsTruncated: true, id: "call_2" }, "nothing arrived: refused, not run with {}")
      const filtered = yield* collect(model, request())
      assert.strictEqual(finishOf(filtered.events), "content_filter")
      assert.strictEqual(filtered.text, "Some of it")
    }))

  it.live("a completed response with whole arguments is not marked, even when deltas were split oddly", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(responsesStream([
        created(),
        ...functionCallItem({ id: "fc_1", callId: "call_1", name: "read_file" }, ["{\"me", "dia_id\"", ":\"z\"}"]),
        completed()
      ], { splitSizes: [1] }))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(toolCallOf(result.events), { name: "read_file", args: { media_id: "z" }, id: "call_1" })
    }))
})

describe("OpenAiResponses: errors are typed ProviderErrors, never thrown", () => {
  it.live("response.failed and the error event map through the shared table; text before them is kept", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        responsesStream([created(), ...messageItem("msg_1", ["par"]).slice(0, 3), failed("server_error", "The server had an error")]),
        responsesStream([created(), failed("rate_limit_exceeded", "Rate limit reached for gpt-5")]),
        responsesStream([created(), errorEvent("invalid_api_key", "Incorrect API key provided")]),
        responsesStream([created(), errorEvent(null, "Something went wrong")])
      )
      const server5xx = yield* collect(model, request())
      assert.strictEqual(server5xx.text, "par")
      assert.strictEqual(server5xx.error?.reason, "Server")
      assert.include(server5xx.error!.detail, "The server had an error")
      const limited = (yield* collect(model, request())).error
      assert.strictEqual(limited?.reason, "RateLimit")
      assert.include(limited!.detail, "Rate limit reached")
      assert.strictEqual((yield* collect(model, request())).error?.reason, "Auth")
      const unknown = (yield* collect(model, request())).error
      assert.strictEqual(unknown?.reason, "Server")
      assert.include(unknown!.detail, "Something went wrong")
    }))

  it.live("HTTP errors (429 with Retry-After, 401), a body closed early, no events, and junk data", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        jsonResponse(429, { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }, { "retry-after": "2" }),
        jsonResponse(401, { error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" } }),
        responsesStream([created(), ...messageItem("msg_1", ["half"]).slice(0, 3)]),
        { parts: [] },
        responsesStream([created(), { data: "not json" }])
      )
      const limited = (yield* collect(model, request())).error
      assert.strictEqual(limited?.reason, "RateLimit")
      assert.deepStrictEqual(limited?.retryAfter, Duration.seconds(2))
      assert.strictEqual((yield* collect(model, request())).error?.reason, "Auth")
      const early = yield* collect(model, request())
      assert.strictEqual(early.text, "half")
      assert.strictEqual(early.error?.reason, "Network")
      assert.strictEqual((yield* collect(model, request())).error?.reason, "InvalidResponse")
      assert.strictEqual((yield* collect(model, request())).error?.reason, "InvalidResponse")
    }))

  it.live("a server that ignored stream: true answers with the whole response object", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(jsonResponse(200, {
        id: "resp_1",
        object: "response",
        status: "completed",
        output: [
          { id: "msg_1", type: "message", role: "assistant", content: [{ type: "output_text", text: "Checking.", annotations: [] }] },
          { id: "fc_1", type: "function_call", call_id: "call_1", name: "read_file", arguments: "{\"media_id\":\"q\"}", status: "completed" }
        ],
        usage: responsesUsage(7, 3)
      }))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(withoutKeepAlives(result.events), [
        ProviderEvent.TextDelta({ text: "Checking." }),
        ProviderEvent.Usage({ usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 } }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "q" }, id: "call_1" } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
    }))

  it.live("interrupting the stream closes the socket on the server", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(responsesStream([created(), ...messageItem("msg_1", ["hi"]).slice(0, 3)], { after: "hang" }))
      const fiber = yield* model.stream(request()).pipe(Stream.runDrain, Effect.forkChild)
      const sent = yield* Effect.promise(() => server.request(0))
      yield* Effect.sleep(Duration.millis(30))
      const exit = yield* Fiber.interrupt(fiber).pipe(Effect.timeoutOption(Duration.seconds(2)))
      assert.isTrue(Option.isSome(exit))
      yield* Effect.promise(() => sent.closed).pipe(Effect.timeout(Duration.seconds(2)))
      assert.isTrue(sent.isClosed())
    }))
})

describe("OpenAiResponses: history replay request body", () => {
  const history: ReadonlyArray<ToolHistoryEntry> = [
    {
      functionCall: {
        name: "fetch_url",
        args: { url: "https://example.org" },
        id: "call_abc",
        reasoningDetails: [
          { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "fetch it" }], encrypted_content: "gAAAAenc" },
          // Not encrypted (or another vendor's block): nothing that store:false could resolve.
          { type: "reasoning", id: "rs_2", summary: [] },
          { type: "thinking", thinking: "anthropic-only", signature: "sig" }
        ]
      },
      functionResponse: { name: "fetch_url", response: { result: { summary: "PAGE TEXT", status: "completed" } } },
      preToolCallTextParts: [{ type: "text", text: "Checking the page." }],
      imageMetadata: { imageUrls: [{ url: "https://cdn.example.org/shot.png" }], totalSent: 1, totalValidated: 1 }
    },
    {
      functionCall: { name: "echo_tool", args: { text: "hi" }, id: "toolu_from_anthropic" },
      functionResponse: { name: "echo_tool", response: { result: { echoed: "hi" } } }
    }
  ]

  it.live("function_call / function_call_output pairs, encrypted reasoning before its call, pre-tool text, images, prefill", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup({ parallelToolCalls: false, extraBody: { reasoning: { effort: "low", summary: "auto" } } })
      server.enqueue(responsesStream([created(), ...messageItem("msg", ["ok"]), completed()]))
      yield* collect(model, request({
        tools: [readFileTool],
        messages: [
          { role: "user", content: "hi", name: "Ana", images: [{ url: "https://cdn.example.org/a.png" }] },
          { role: "system", content: "[System: note]" },
          { role: "assistant", content: "Earlier reply." }
        ],
        functionHistory: history,
        assistantPrefill: "So far",
        temperature: 0.4,
        maxOutputTokens: 1000
      }))
      const body = server.requests[0]!.json as Record<string, unknown>
      assert.strictEqual(body.temperature, 0.4)
      assert.strictEqual(body.max_output_tokens, 1000)
      assert.strictEqual(body.parallel_tool_calls, false)
      assert.deepStrictEqual(body.reasoning, { effort: "low", summary: "auto" })
      assert.deepStrictEqual(body.input, [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Ana: hi" },
            { type: "input_image", image_url: "https://cdn.example.org/a.png", detail: "auto" }
          ]
        },
        { role: "system", content: "[System: note]" },
        { role: "assistant", content: "Earlier reply." },
        { type: "reasoning", id: "rs_1", summary: [{ type: "summary_text", text: "fetch it" }], encrypted_content: "gAAAAenc" },
        { role: "assistant", content: "Checking the page." },
        { type: "function_call", call_id: "call_abc", name: "fetch_url", arguments: "{\"url\":\"https://example.org\"}" },
        { type: "function_call_output", call_id: "call_abc", output: "PAGE TEXT" },
        {
          role: "user",
          content: [
            { type: "input_text", text: "[Images returned by the fetch_url tool]" },
            { type: "input_image", image_url: "https://cdn.example.org/shot.png", detail: "auto" }
          ]
        },
        { type: "function_call", call_id: "toolu_from_anthropic", name: "echo_tool", arguments: "{\"text\":\"hi\"}" },
        { type: "function_call_output", call_id: "toolu_from_anthropic", output: "{\"echoed\":\"hi\"}" },
        { role: "assistant", content: "So far" }
      ])
    }))
})

describe("OpenAiResponses decoder: any byte split (property)", () => {
  const transcript = responsesTranscript([
    created(),
    ...reasoningItem("rs_1", ["Thinking ", "é 😀"], { encrypted: "enc" }),
    ...messageItem("msg_1", ["Héllo ", "wörld ", "😀!"], 1),
    ...functionCallItem({ id: "fc_1", callId: "call_1", name: "read_file" }, ["{\"media_id\":", "\"ü\"}"], { outputIndex: 2 }),
    completed({ usage: responsesUsage(12, 9, { cached: 4, reasoning: 3 }) })
  ], { crlf: true })
  const bytes = new TextEncoder().encode(transcript)
  const decode = (pieces: ReadonlyArray<Uint8Array>) =>
    Stream.fromIterable(pieces).pipe(
      decodeSseBytes(() => makeResponsesDecoder({ provider: "openai-responses", maxRepairChars: 1 << 20 }), (error) => Effect.fail(invalidResponse("openai-responses", error.message))),
      Stream.runCollect
    )

  it.effect("decodes the same events whatever the cuts (inside CRLF pairs and UTF-8 characters too)", () =>
    Effect.gen(function*() {
      const whole = yield* decode([bytes])
      assert.strictEqual(whole.filter((event) => event._tag === "TextDelta").map((event) => (event._tag === "TextDelta" ? event.text : "")).join(""), "Héllo wörld 😀!")
      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(fc.nat(), { maxLength: 24 }), async (offsets) => {
            const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b)
            const pieces: Array<Uint8Array> = []
            let previous = 0
            for (const point of [...points, bytes.length]) {
              pieces.push(bytes.subarray(previous, point))
              previous = point
            }
            assert.deepStrictEqual(await Effect.runPromise(decode(pieces)), whole)
          }),
          { numRuns: 200 }
        )
      )
    }))
})

describe("OpenAiResponses in a whole turn: key rotation through the outer tier", () => {
  it.live("a response.failed rate limit on key 1 rotates to key 2, which runs a tool and answers", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      server.enqueue(
        responsesStream([created(), failed("rate_limit_exceeded", "Rate limit reached")]),
        responsesStream([created(), ...functionCallItem({ id: "fc_1", callId: "call_e1", name: "echo_tool" }, ["{\"text\":", "\"hello\"}"]), completed({ usage: responsesUsage(10, 5) })]),
        responsesStream([created(), ...messageItem("msg_1", ["I echoed: ", "hello"]), completed({ usage: responsesUsage(20, 4, { cached: 8 }) })])
      )
      const env = ConfigProvider.fromEnv({ env: Object.fromEntries([
        ["LLM_PROVIDER", "openai-responses"],
        ["LLM_BASE_URL", `${server.url}/v1`],
        ["LLM_API_KEYS", "key-1,key-2"],
        ["LLM_MODELS", "gpt-test"]
      ]) })
      const settings = yield* Effect.provide(ProviderConfig, Layer.provide(ProviderConfig.layer, ConfigProvider.layer(env)))
      assert.strictEqual(settings.provider, "openai-responses")
      const modelLayer = layerConfigFor("openai-responses").pipe(Layer.provide(HttpLive), Layer.provide(ConfigProvider.layer(env)))
      const turnLayer = Layer.mergeAll(modelLayer, routePlanLayer.pipe(Layer.provide(Layer.succeed(ProviderConfig, settings))), KeyPool.Default)
      const turn = yield* withLoopHarness({ script: [], tools: [echoTool] }, () => runGenerationTurn().pipe(Effect.provide(turnLayer)))
      assert.strictEqual(turn.status, "completed")
      assert.strictEqual(turn.text, "I echoed: hello")
      assert.deepStrictEqual(turn.attempts, [
        { model: "gpt-test", keyIndex: 0, status: "error" },
        { model: "gpt-test", keyIndex: 1, status: "completed" }
      ])
      assert.deepStrictEqual(turn.usage, { inputTokens: 30, outputTokens: 9, totalTokens: 39, cachedInputTokens: 8 })
      assert.deepStrictEqual(server.requests.map((sent) => sent.headers.authorization), ["Bearer key-1", "Bearer key-2", "Bearer key-2"])
      const last = server.requests[2]!.json as { input: ReadonlyArray<Record<string, unknown>> }
      assert.deepStrictEqual(last.input.slice(-2), [
        { type: "function_call", call_id: "call_e1", name: "echo_tool", arguments: "{\"text\":\"hello\"}" },
        { type: "function_call_output", call_id: "call_e1", output: "{\"echoed\":\"hello\"}" }
      ])
    }))
})

describe("OpenAiResponses.layerConfig", () => {
  it.effect("a bad LLM_TOOL_CALLING fails at start-up naming the variable", () =>
    Effect.gen(function*() {
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_TOOL_CALLING", "sometimes"]]) })
      const error = yield* Layer.build(Layer.provide(OpenAiResponses.layerConfig(), HttpLive)).pipe(
        Effect.provide(ConfigProvider.layer(config)),
        Effect.scoped,
        Effect.flip
      )
      assert.include(String(error), "LLM_TOOL_CALLING")
    }))

  it.live("reads LLM_BASE_URL", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const config = ConfigProvider.fromEnv({ env: Object.fromEntries([["LLM_BASE_URL", `${server.url}/v1`]]) })
      const model = yield* buildModel(OpenAiResponses.layerConfig().pipe(Layer.provide(ConfigProvider.layer(config))))
      server.enqueue(responsesStream([created(), ...messageItem("m", ["ok"]), completed()]))
      const result = yield* collect(model, request({ messages: [userMessage("hey")] }))
      assert.strictEqual(result.text, "ok")
      assert.strictEqual(server.requests[0]!.path, "/v1/responses")
    }))
})
