import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { ProviderConfig } from "../../src/config/ProviderConfig"
import { routePlanLayer } from "../../src/loop/RoutePlan"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { layerConfigFor } from "../../src/provider/httpProviders"
import { withLoopHarness } from "../loop/harness"
import { fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk, toolCallChunk, usageChunk } from "../support/fakeProviders/openAiCompatible"
import { echoTool } from "../support/tools/testTools"
import { HttpLive } from "./harness"

/**
 * A whole generation turn (outer tier, tool loop, tool execution) over the real
 * OpenAI-compatible provider and HTTP client, configured from the environment only:
 * `LLM_PROVIDER=openai-compatible LLM_BASE_URL=http://127.0.0.1:<port>/v1 LLM_API_KEYS=k LLM_MODELS=m`.
 */
describe("a full turn against the loopback OpenAI-compatible fake, configured by env only", () => {
  it.live("tool call, tool result replayed, final answer, usage summed", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      server.enqueue(
        openAiStream([
          textChunk("Let me echo that. "),
          toolCallChunk({ index: 0, id: "call_e1", name: "echo_tool", arguments: "{\"text\":\"hel" }),
          toolCallChunk({ index: 0, arguments: "lo\"}" }),
          finishChunk("tool_calls"),
          usageChunk(10, 5)
        ], { crlf: true, splitSizes: [9, 31] }),
        openAiStream([textChunk("I echoed: "), textChunk("hello"), finishChunk("stop"), usageChunk(20, 4)])
      )
      const env = ConfigProvider.fromEnv({ env: Object.fromEntries([
        ["LLM_PROVIDER", "openai-compatible"],
        ["LLM_BASE_URL", `${server.url}/v1`],
        ["LLM_API_KEYS", "k"],
        ["LLM_MODELS", "m"]
      ]) })
      const settings = yield* Effect.provide(ProviderConfig, Layer.provide(ProviderConfig.layer, ConfigProvider.layer(env)))
      assert.strictEqual(settings.provider, "openai-compatible")
      const kind = settings.provider === "scripted" ? "openai-compatible" : settings.provider
      const modelLayer = layerConfigFor(kind).pipe(Layer.provide(HttpLive), Layer.provide(ConfigProvider.layer(env)))
      const turnLayer = Layer.mergeAll(
        modelLayer,
        routePlanLayer.pipe(Layer.provide(Layer.succeed(ProviderConfig, settings))),
        KeyPool.Default
      )

      const result = yield* withLoopHarness({ script: [], tools: [echoTool] }, ({ collected }) =>
        Effect.gen(function*() {
          const turn = yield* runGenerationTurn().pipe(Effect.provide(turnLayer))
          return { turn, shown: yield* collected.delivered }
        }))

      assert.strictEqual(result.turn.status, "completed")
      assert.strictEqual(result.turn.iterations, 2)
      assert.deepStrictEqual(result.turn.attempts, [{ model: "m", keyIndex: 0, status: "completed" }])
      assert.deepStrictEqual(result.turn.toolCalls.map((call) => [call.name, call.args, call.success]), [
        ["echo_tool", { text: "hello" }, true]
      ])
      assert.include(result.turn.text, "I echoed: hello")
      assert.strictEqual(result.shown, "Let me echo that. I echoed: hello")
      assert.deepStrictEqual(result.turn.usage, { inputTokens: 30, outputTokens: 9, totalTokens: 39 })

      assert.strictEqual(server.requests.length, 2)
      for (const sent of server.requests) {
        assert.strictEqual(sent.headers.authorization, "Bearer k")
        assert.strictEqual((sent.json as { model: string }).model, "m")
      }
      const first = server.requests[0]!.json as { tools: ReadonlyArray<{ function: { name: string } }> }
      assert.deepStrictEqual(first.tools.map((tool) => tool.function.name), ["echo_tool"])
      const second = server.requests[1]!.json as { messages: ReadonlyArray<Record<string, unknown>> }
      const replay = second.messages.slice(-2)
      assert.deepStrictEqual(replay, [
        {
          role: "assistant",
          content: "Let me echo that. ",
          tool_calls: [{ id: "call_e1", type: "function", function: { name: "echo_tool", arguments: "{\"text\":\"hello\"}" } }]
        },
        { role: "tool", tool_call_id: "call_e1", content: "{\"echoed\":\"hello\"}" }
      ])
    }))
})
