import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Stream } from "effect"
import { ProviderEvent } from "../../../src/domain/ProviderEvent"
import type { ToolHistoryEntry } from "../../../src/domain/ToolHistoryEntry"
import * as Gemini from "../../../src/provider/google/Gemini"
import { missingSignaturePlaceholder } from "../../../src/provider/google/geminiRequest"
import { fakeLlmServer, jsonResponse } from "../../support/fakeProviders/FakeLlmServer"
import {
  geminiCall,
  geminiFinish,
  geminiParts,
  geminiStream,
  geminiText,
  geminiThought,
  usageMetadata
} from "../../support/fakeProviders/gemini"
import { buildModel, collect, readFileTool, request } from "../harness"

const setup = (options: Gemini.GeminiOptions = {}) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer()
    const model = yield* buildModel(Gemini.layer({ baseUrl: server.url, ...options }))
    return { server, model }
  })

describe("Gemini streamGenerateContent over loopback SSE", () => {
  it.live("streams thoughts, text, a functionCall with its thoughtSignature, finish and usage", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(geminiStream([
        geminiThought("Thinking about it."),
        geminiText("Let me "),
        geminiText("look."),
        geminiCall("read_file", { media_id: "m1" }, "c2lnbmF0dXJl"),
        geminiFinish("STOP", usageMetadata(20, 6, 4, 12))
      ], { splitSizes: [5, 17, 2] }))
      const result = yield* collect(model, request({ model: "gemini-2.5-flash", tools: [readFileTool] }))
      assert.isUndefined(result.error)
      assert.strictEqual(model.name, "google")
      assert.deepStrictEqual(result.events, [
        ProviderEvent.ReasoningDelta({ text: "Thinking about it." }),
        ProviderEvent.TextDelta({ text: "Let me " }),
        ProviderEvent.TextDelta({ text: "look." }),
        // The call is held until the finish chunk, so its usage comes first. Thoughts are the
        // reasoning part of the output; `cachedContentTokenCount` the cached part of the prompt.
        ProviderEvent.Usage({ usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30, cachedInputTokens: 12, reasoningTokens: 4 } }),
        ProviderEvent.ToolCall({ call: { name: "read_file", args: { media_id: "m1" }, thoughtSignature: "c2lnbmF0dXJl" } }),
        ProviderEvent.Finish({ reason: "tool_calls" })
      ])
      const sent = server.requests[0]!
      assert.strictEqual(sent.path, "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
      assert.strictEqual(sent.headers["x-goog-api-key"], "sk-test-key")
      const body = sent.json as Record<string, unknown>
      assert.deepStrictEqual(body.systemInstruction, { parts: [{ text: "You are loopcord." }] })
      assert.deepStrictEqual(body.tools, [{
        functionDeclarations: [{ name: "read_file", description: readFileTool.description, parametersJsonSchema: readFileTool.parameters }]
      }])
    }))

  it.live("MAX_TOKENS ⇒ length, SAFETY ⇒ content_filter, a blocked prompt ⇒ content_filter", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        geminiStream([geminiText("long"), geminiFinish("MAX_TOKENS")]),
        geminiStream([geminiFinish("SAFETY")]),
        geminiStream([{ promptFeedback: { blockReason: "PROHIBITED_CONTENT" }, usageMetadata: usageMetadata(5, 0) }])
      )
      const finishOf = (events: ReadonlyArray<ProviderEvent>) => events.find((event) => event._tag === "Finish")
      assert.deepStrictEqual(finishOf((yield* collect(model, request())).events), ProviderEvent.Finish({ reason: "length" }))
      assert.deepStrictEqual(finishOf((yield* collect(model, request())).events), ProviderEvent.Finish({ reason: "content_filter" }))
      const blocked = yield* collect(model, request())
      assert.isUndefined(blocked.error)
      assert.deepStrictEqual(finishOf(blocked.events), ProviderEvent.Finish({ reason: "content_filter" }))
    }))

  it.live("every functionCall of a pass is emitted, each with its own part's signature", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(geminiStream([
        geminiParts([{ functionCall: { name: "a", args: { x: 1 } }, thoughtSignature: "s1" }, { functionCall: { name: "b", args: {} } }]),
        geminiFinish("STOP")
      ]))
      const result = yield* collect(model, request())
      assert.deepStrictEqual(result.events.filter((event) => event._tag === "ToolCall"), [
        ProviderEvent.ToolCall({ call: { name: "a", args: { x: 1 }, thoughtSignature: "s1" } }),
        ProviderEvent.ToolCall({ call: { name: "b", args: {} } })
      ])
    }))

  it.live("an error chunk, an HTTP error and a body closed without a finish reason are typed errors", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(
        geminiStream([geminiText("a"), { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } }]),
        jsonResponse(429, [{ error: { code: 429, message: "Resource has been exhausted", status: "RESOURCE_EXHAUSTED" } }]),
        jsonResponse(400, { error: { code: 400, message: "API key not valid", status: "INVALID_ARGUMENT" } }),
        geminiStream([geminiText("half")])
      )
      const midStream = yield* collect(model, request())
      assert.strictEqual(midStream.text, "a")
      assert.strictEqual(midStream.error?.reason, "Server")
      const quota = (yield* collect(model, request())).error
      assert.strictEqual(quota?.reason, "RateLimit")
      assert.include(quota!.detail, "Resource has been exhausted")
      assert.strictEqual((yield* collect(model, request())).error?.reason, "BadRequest")
      const cut = yield* collect(model, request())
      assert.strictEqual(cut.text, "half")
      assert.strictEqual(cut.error?.reason, "Network")
    }))

  it.live("interrupting the stream closes the socket on the server", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(geminiStream([geminiText("hi")], { after: "hang" }))
      const fiber = yield* model.stream(request()).pipe(Stream.runDrain, Effect.forkChild)
      const sent = yield* Effect.promise(() => server.request(0))
      yield* Effect.sleep(Duration.millis(30))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => sent.closed).pipe(Effect.timeout(Duration.seconds(2)))
      assert.isTrue(sent.isClosed())
    }))

  it("builds URLs for a bare host, a versioned base and a models/ prefixed id", () => {
    assert.strictEqual(
      Gemini.streamUrl("https://generativelanguage.googleapis.com", "v1beta", "models/gemini-3-pro"),
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-3-pro:streamGenerateContent?alt=sse"
    )
    assert.strictEqual(
      Gemini.streamUrl("http://127.0.0.1:9/v1beta/", "v1beta", "g"),
      "http://127.0.0.1:9/v1beta/models/g:streamGenerateContent?alt=sse"
    )
  })
})

describe("Gemini history replay request body", () => {
  const history: ReadonlyArray<ToolHistoryEntry> = [
    {
      functionCall: { name: "fetch_url", args: { url: "https://example.org" }, thoughtSignature: "c2ln" },
      functionResponse: { name: "fetch_url", response: { result: { summary: "PAGE TEXT", status: "completed" } } },
      preToolCallTextParts: [{ type: "text", text: "Checking." }]
    },
    {
      // A call made by another provider before a fallback to Gemini: no signature was ever issued.
      functionCall: { name: "echo_tool", args: { text: "hi" }, id: "call_x" },
      functionResponse: { name: "echo_tool", response: { result: { echoed: "hi" } } },
      imageMetadata: { imageUrls: [{ url: "https://cdn.example.org/i.png", mimeType: "image/png" }], totalSent: 1, totalValidated: 1 }
    }
  ]

  it.live("replays thoughtSignature on the model turn, functionResponse with the preferred summary, and the prefill", () =>
    Effect.gen(function*() {
      const { model, server } = yield* setup()
      server.enqueue(geminiStream([geminiText("ok"), geminiFinish("STOP")]))
      yield* collect(model, request({
        messages: [{ role: "user", content: "hi", name: "Ana", images: [{ url: "data:image/jpeg;base64,QUJD" }] }],
        functionHistory: history,
        assistantPrefill: "So far",
        temperature: 0.3,
        maxOutputTokens: 256
      }))
      const body = server.requests[0]!.json as Record<string, unknown>
      assert.deepStrictEqual(body.generationConfig, { temperature: 0.3, maxOutputTokens: 256 })
      assert.deepStrictEqual(body.contents, [
        { role: "user", parts: [{ text: "Ana: hi" }, { inlineData: { mimeType: "image/jpeg", data: "QUJD" } }] },
        {
          role: "model",
          parts: [
            { text: "Checking." },
            { functionCall: { name: "fetch_url", args: { url: "https://example.org" } }, thoughtSignature: "c2ln" }
          ]
        },
        { role: "user", parts: [{ functionResponse: { name: "fetch_url", response: { result: "PAGE TEXT" } } }] },
        {
          role: "model",
          parts: [{ functionCall: { name: "echo_tool", args: { text: "hi" }, id: "call_x" }, thoughtSignature: missingSignaturePlaceholder }]
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "echo_tool", response: { result: { echoed: "hi" } }, id: "call_x" } },
            { fileData: { mimeType: "image/png", fileUri: "https://cdn.example.org/i.png" } }
          ]
        },
        { role: "model", parts: [{ text: "So far" }] }
      ])
    }))
})
