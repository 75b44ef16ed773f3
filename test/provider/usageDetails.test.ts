import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { buildModel, collect, request } from "./harness"

describe("usage details from the vendors' own fields", () => {
  it.live("Chat Completions: prompt_tokens_details.cached_tokens and completion_tokens_details.reasoning_tokens", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }))
      server.enqueue(openAiStream([
        textChunk("ok"),
        finishChunk("stop"),
        {
          id: "chatcmpl-fake",
          object: "chat.completion.chunk",
          choices: [],
          usage: {
            prompt_tokens: 2006,
            completion_tokens: 300,
            total_tokens: 2306,
            prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0 }
          }
        }
      ]))
      const result = yield* collect(model, request())
      const usage = result.events.find((event) => event._tag === "Usage")
      assert.deepStrictEqual(usage?._tag === "Usage" ? usage.usage : undefined, {
        inputTokens: 2006,
        outputTokens: 300,
        totalTokens: 2306,
        cachedInputTokens: 1920,
        reasoningTokens: 256
      })
    }))

  it.live("Chat Completions from DeepSeek: prompt_cache_hit_tokens is the cached part", () =>
    Effect.gen(function*() {
      const server = yield* fakeLlmServer()
      const model = yield* buildModel(OpenAiCompatible.layer({ baseUrl: `${server.url}/v1` }))
      server.enqueue(openAiStream([
        textChunk("ok"),
        finishChunk("stop"),
        {
          id: "chatcmpl-fake",
          object: "chat.completion.chunk",
          choices: [],
          usage: {
            prompt_tokens: 900,
            completion_tokens: 40,
            total_tokens: 940,
            prompt_cache_hit_tokens: 768,
            prompt_cache_miss_tokens: 132,
            completion_tokens_details: { reasoning_tokens: 25 }
          }
        }
      ]))
      const result = yield* collect(model, request())
      const usage = result.events.find((event) => event._tag === "Usage")
      assert.deepStrictEqual(usage?._tag === "Usage" ? usage.usage : undefined, {
        inputTokens: 900,
        outputTokens: 40,
        totalTokens: 940,
        cachedInputTokens: 768,
        reasoningTokens: 25
      })
    }))
})
