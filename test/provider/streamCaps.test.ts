import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Layer, Logger, References } from "effect"
import { makeCollectingSink } from "../../src/chat/CollectingSink"
import { LoopConfig } from "../../src/config/LoopConfig"
import { PassResult } from "../../src/domain/PassResult"
import { ProviderEvent } from "../../src/domain/ProviderEvent"
import { reasoningCutMarker, REPLY_CUT_MARKER } from "../../src/loop/passCaps"
import { ResponseSink } from "../../src/loop/ResponseSink"
import { streamOnce } from "../../src/loop/streamOnce"
import { makeTurnSignals, TurnSignals } from "../../src/loop/TurnSignals"
import * as Anthropic from "../../src/provider/anthropic/Anthropic"
import { LanguageModel } from "../../src/provider/LanguageModel"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import * as OpenAiResponses from "../../src/provider/openai/OpenAiResponses"
import { type FakePart, type FakeResponse, fakeLlmServer, type RecordedRequest, sseText } from "../support/fakeProviders/FakeLlmServer"
import { blockDelta, blockStart, messageStart } from "../support/fakeProviders/anthropic"
import { chunk, textChunk, toolCallChunk } from "../support/fakeProviders/openAiCompatible"
import { attempt, request as passRequest } from "../loop/harness"
import { buildModel, collect, request, withoutKeepAlives } from "./harness"

/** Small caps, so a test streams a few MB past them rather than hundreds. */
const ARGUMENT_CAP = 4096
const REASONING_CAP = 4096
const REPLY_CAPACITY = 6000
/** What the hostile servers below stream past a cap (they would go on, then hang, if still read). */
const HOSTILE_BYTES = 3 * 1024 * 1024

const sse = (value: unknown, event?: string) => sseText([{ ...(event === undefined ? {} : { event }), data: JSON.stringify(value) }])

/**
 * A stream that opens with `head`, repeats `piece` for a few MB as fast as the socket drains,
 * and then hangs: a client that kept reading would wait forever, so a test that ends proves the
 * reader stopped and hung up.
 */
const endless = (head: string, piece: string): FakeResponse => {
  const parts: Array<FakePart> = [{ write: head }]
  for (let sent = 0; sent < HOSTILE_BYTES; sent += piece.length) parts.push({ write: piece })
  parts.push({ hang: true })
  return { parts, gapMs: "none" }
}

const hungUp = (sent: RecordedRequest) =>
  Effect.promise(() => sent.closed).pipe(
    Effect.timeoutOrElse({ duration: Duration.seconds(5), orElse: () => Effect.fail(new Error("the request was never aborted")) })
  )

const withLogs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const logs: Array<string> = []
    const logger = Logger.make(({ fiber, logLevel, message }) => {
      logs.push(`${logLevel.toUpperCase()} ${String(message)} ${JSON.stringify(fiber.getRef(References.CurrentLogAnnotations))}`)
    })
    const value = yield* effect.pipe(Effect.provide(Logger.layer([logger])))
    return { value, logs }
  })

/** A reader that never stops would wait on the hanging server: fail clearly instead. */
const bounded = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  effect.pipe(Effect.timeoutOrElse({ duration: Duration.seconds(10), orElse: () => Effect.fail(new Error("the pass kept reading past its cap")) }))

const toolCallOf = (events: ReadonlyArray<ProviderEvent>) => {
  const found = events.find((event) => event._tag === "ToolCall")
  return found?._tag === "ToolCall" ? found.call : undefined
}

const filler = (chars: number) => "a".repeat(chars)

describe("tool-call arguments past BOT_JSON_REPAIR_MAX_CHARS: the stream stops, the call is refused as truncated", () => {
  it.live("[issue 25] Chat Completions: argument deltas without end", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, jsonRepairMaxChars: ARGUMENT_CAP }))
      server.enqueue(endless(
        sse(toolCallChunk({ index: 0, id: "call_1", name: "web_search", arguments: "{\"query\":\"" })),
        sse(toolCallChunk({ index: 0, arguments: filler(2048) }))
      ))
      const { logs, value } = yield* withLogs(bounded(collect(model, request())))
      yield* hungUp(server.requests[0]!)
      assert.isUndefined(value.error)
      assert.deepStrictEqual(withoutKeepAlives(value.events), [
        ProviderEvent.ToolCall({ call: { name: "web_search", args: {}, argumentsTruncated: true, id: "call_1" } }),
        ProviderEvent.Finish({ reason: "length" })
      ])
      assert.isTrue(logs.some((line) => line.startsWith("ERROR tool arguments outgrew BOT_JSON_REPAIR_MAX_CHARS") && line.includes("\"max_chars\":4096")), logs.join("\n"))
    }))

  it.live("[issue 25] Chat Completions: a second call outgrowing the cap ends the pass; the first, complete, is kept", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, jsonRepairMaxChars: ARGUMENT_CAP }))
      server.enqueue(endless(
        sse(toolCallChunk({ index: 0, id: "call_1", name: "web_search", arguments: "{\"query\":\"weather\"}" })) +
          sse(toolCallChunk({ index: 1, id: "call_2", name: "fetch_url", arguments: "{\"url\":\"" })),
        sse(toolCallChunk({ index: 1, arguments: filler(2048) }))
      ))
      const result = yield* bounded(collect(model, request()))
      yield* hungUp(server.requests[0]!)
      assert.deepStrictEqual(toolCallOf(result.events), { name: "web_search", args: { query: "weather" }, id: "call_1" })
    }))

  it.live("[issue 25] Chat Completions: a tool name streamed without end stops growing", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, jsonRepairMaxChars: ARGUMENT_CAP }))
      const pieces = Array.from({ length: 200 }, () => sse(toolCallChunk({ index: 0, name: "x".repeat(50) })))
      server.enqueue({ parts: [{ write: sse(toolCallChunk({ index: 0, id: "call_1", name: "web_", arguments: "{}" })) + pieces.join("") + sse(chunk({}, "tool_calls")) + "data: [DONE]\n\n" }] })
      const result = yield* collect(model, request())
      const call = toolCallOf(result.events)
      assert.isAtMost(call?.name.length ?? 0, 256 + 50)
    }))

  it.live("[issue 25] Anthropic: input_json_delta without end", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(Anthropic.layer({ baseUrl: server.url, jsonRepairMaxChars: ARGUMENT_CAP }))
      server.enqueue(endless(
        sse(messageStart(), "message_start") +
          sse(blockStart(0, { type: "tool_use", id: "toolu_1", name: "web_search", input: {} }), "content_block_start") +
          sse(blockDelta(0, { type: "input_json_delta", partial_json: "{\"query\":\"" }), "content_block_delta"),
        sse(blockDelta(0, { type: "input_json_delta", partial_json: filler(2048) }), "content_block_delta")
      ))
      const result = yield* bounded(collect(model, request()))
      yield* hungUp(server.requests[0]!)
      assert.isUndefined(result.error)
      assert.deepStrictEqual(withoutKeepAlives(result.events), [
        ProviderEvent.ToolCall({ call: { name: "web_search", args: {}, argumentsTruncated: true, id: "toolu_1" } }),
        ProviderEvent.Finish({ reason: "length" })
      ])
    }))

  it.live("[issue 25] Responses: function_call_arguments.delta without end", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiResponses.layer({ baseUrl: `${server.url}/v1`, jsonRepairMaxChars: ARGUMENT_CAP }))
      const item = { id: "fc_1", type: "function_call", call_id: "call_1", name: "web_search", arguments: "" }
      server.enqueue(endless(
        sse({ type: "response.output_item.added", output_index: 0, item }, "response.output_item.added"),
        sse({ type: "response.function_call_arguments.delta", item_id: "fc_1", delta: filler(2048) }, "response.function_call_arguments.delta")
      ))
      const result = yield* bounded(collect(model, request()))
      yield* hungUp(server.requests[0]!)
      assert.isUndefined(result.error)
      assert.deepStrictEqual(withoutKeepAlives(result.events), [
        ProviderEvent.ToolCall({ call: { name: "web_search", args: {}, argumentsTruncated: true, id: "call_1" } }),
        ProviderEvent.Finish({ reason: "length" })
      ])
    }))
})

describe("hidden parts a decoder keeps for the replay have caps of their own (they show nothing the loop could count)", () => {
  it.live("[issue 25] Anthropic: a thinking signature without end fails the pass and the request is aborted", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(Anthropic.layer({ baseUrl: server.url, jsonRepairMaxChars: ARGUMENT_CAP }))
      server.enqueue(endless(
        sse(messageStart(), "message_start") +
          sse(blockStart(0, { type: "thinking", thinking: "", signature: "" }), "content_block_start"),
        sse(blockDelta(0, { type: "signature_delta", signature: filler(2048) }), "content_block_delta")
      ))
      const result = yield* bounded(collect(model, request()))
      yield* hungUp(server.requests[0]!)
      assert.strictEqual(result.error?.reason, "InvalidResponse")
      assert.include(result.error?.detail ?? "", `signature grew past ${ARGUMENT_CAP} characters`)
    }))

  it.live("[issue 25] Chat Completions: an encrypted reasoning_details block without end fails the pass and the request is aborted", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1`, jsonRepairMaxChars: ARGUMENT_CAP }))
      server.enqueue(endless(
        sse(chunk({ reasoning_details: [{ type: "reasoning.encrypted", index: 0, data: "" }] })),
        sse(chunk({ reasoning_details: [{ type: "reasoning.encrypted", index: 0, data: filler(2048) }] }))
      ))
      const result = yield* bounded(collect(model, request()))
      yield* hungUp(server.requests[0]!)
      assert.strictEqual(result.error?.reason, "InvalidResponse")
      assert.include(result.error?.detail ?? "", `reasoning_details block grew past ${ARGUMENT_CAP} characters`)
    }))
})

/** One pass (streamOnce) over a real OpenAI-compatible model, with small caps. */
const passOver = (baseUrl: string, capacity: number | undefined) =>
  Effect.gen(function*() {
    const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl }))
    const collected = yield* makeCollectingSink(capacity === undefined ? {} : { capacity })
    const signals = yield* makeTurnSignals("channel-1")
    const { logs, value } = yield* withLogs(bounded(streamOnce({ request: passRequest(), attempt: attempt({ provider: "openai-compatible" }) }).pipe(
      Effect.provide(Layer.mergeAll(
        Layer.succeed(LanguageModel, model),
        Layer.succeed(ResponseSink, collected.sink),
        Layer.succeed(TurnSignals, signals),
        LoopConfig.make({ maxReasoningChars: REASONING_CAP })
      ))
    )))
    return { pass: value, logs, delivered: yield* collected.delivered }
  })

describe("what one pass keeps of a stream: reasoning and reply text have caps", () => {
  it.live("[issue 25] reasoning past STREAM_MAX_REASONING_CHARS: the first part is kept with a marker, the stream stops", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      server.enqueue(endless(sse(chunk({ content: "" })), sse(chunk({ reasoning_content: "thinking " + filler(1000) }))))
      const { delivered, logs, pass } = yield* passOver(`${server.url}/v1`, undefined)
      yield* hungUp(server.requests[0]!)
      assert.strictEqual(pass._tag, "EmptyResponse")
      if (pass._tag !== "EmptyResponse") return
      assert.strictEqual(pass.finishReason, "length")
      assert.strictEqual(pass.emptyResponseReason, "reasoning_limit")
      const raw = pass.thoughtLog?.raw ?? ""
      assert.isTrue(raw.startsWith("thinking aaa"))
      assert.strictEqual(raw, raw.slice(0, REASONING_CAP) + reasoningCutMarker(REASONING_CAP))
      assert.strictEqual(delivered, "")
      assert.isTrue(logs.some((line) => line.startsWith("WARN the provider streamed more reasoning than a pass keeps")), logs.join("\n"))
    }))

  it.live("[issue 25] reply text past the destination's capacity: what fits, then the marker; the pass ends as cut", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      server.enqueue(endless(sse(textChunk("Once upon a time ")), sse(textChunk(filler(1000)))))
      const { delivered, logs, pass } = yield* passOver(`${server.url}/v1`, REPLY_CAPACITY)
      yield* hungUp(server.requests[0]!)
      const shown = ("Once upon a time " + filler(REPLY_CAPACITY)).slice(0, REPLY_CAPACITY) + REPLY_CUT_MARKER
      assert.deepStrictEqual(pass, PassResult.Completed({ accumulatedText: shown, stopReason: "send_message_limit" }))
      assert.strictEqual(delivered, shown)
      assert.isTrue(logs.some((line) => line.startsWith("WARN the provider streamed more reply text than the destination can show")), logs.join("\n"))
    }))

  it.live("[issue 25] a destination that declares no capacity still gets the 1 MiB default", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      server.enqueue(endless(sse(textChunk("x")), sse(textChunk(filler(16_384)))))
      const { delivered, pass } = yield* passOver(`${server.url}/v1`, undefined)
      yield* hungUp(server.requests[0]!)
      assert.strictEqual(pass.stopReason, "send_message_limit")
      assert.strictEqual(delivered.length, 1_048_576 + REPLY_CUT_MARKER.length)
    }))
})
