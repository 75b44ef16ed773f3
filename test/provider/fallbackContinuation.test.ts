import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { runGenerationTurn } from "../../src/loop/generationTurn"
import { KeyPool } from "../../src/loop/KeyPool"
import { RoutePlan } from "../../src/loop/RoutePlan"
import { continuationInstruction } from "../../src/loop/runToolLoop"
import * as OpenAi from "../../src/provider/openai/OpenAiCompatible"
import { withLoopHarness } from "../loop/harness"
import { llamaCppThinking, vllmWithoutContinue } from "../support/fakeProviders/continuationServers"
import type { FakeHandler } from "../support/fakeProviders/FakeLlmServer"
import { fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { HttpLive } from "./harness"

/**
 * Fallback continuation (design decision 4, issue 11.9) against servers that treat a reply
 * prefill the way real ones do. The primary model posts half a reply and drops the connection;
 * the fallback model must finish it without losing or repeating a word.
 */
const POSTED = "The capital of France is Paris. It sits on the Seine, "
const REST = "and it is known for its museums."

/** `primary` breaks after POSTED; any other model is answered by `fallback`. */
const servedBy = (fallback: FakeHandler): FakeHandler => (request) =>
  (request.json as { model?: string }).model === "primary"
    ? openAiStream(POSTED.split(/(?<= )/).map(textChunk), { omitDone: true, after: "destroy" })
    : fallback(request)

const turnOn = (handler: FakeHandler) =>
  Effect.gen(function*() {
    const server = yield* fakeLlmServer({ handler: servedBy(handler) })
    const provider = OpenAi.layer({ baseUrl: `${server.url}/v1` }).pipe(Layer.provide(HttpLive))
    const turn = yield* withLoopHarness({ script: [] }, ({ collected }) =>
      Effect.gen(function*() {
        const result = yield* runGenerationTurn().pipe(
          Effect.provide(Layer.mergeAll(provider, RoutePlan.make(["primary", "fallback"], ["k"]), KeyPool.Default))
        )
        return { result, shown: yield* collected.delivered }
      }))
    return { ...turn, server }
  })

describe("fallback continuation on real servers' prefill behaviour (issue 11.9)", () => {
  it.live("llama.cpp in thinking mode refuses the prefill (HTTP 400): the pass is retried once with an instruction naming the posted text", () =>
    Effect.gen(function*() {
      const { result, server, shown } = yield* turnOn(llamaCppThinking(REST))
      assert.strictEqual(result.status, "completed")
      assert.strictEqual(shown, POSTED + REST, "nothing lost, nothing repeated")
      const bodies = server.requests.map((request) => request.json as { model: string; messages: ReadonlyArray<{ role: string; content: string }> })
      assert.deepStrictEqual(bodies.map((body) => body.model), ["primary", "fallback", "fallback"])
      assert.deepStrictEqual(bodies[1]?.messages.at(-1), { role: "assistant", content: POSTED })
      assert.deepStrictEqual(bodies[2]?.messages.at(-1), { role: "user", content: continuationInstruction(POSTED) })
      assert.deepStrictEqual(result.attempts.map((attempt) => attempt.status), ["error", "completed"])
    }))

  it.live("vLLM without continue_final_message restarts the reply: the repeated text is stripped", () =>
    Effect.gen(function*() {
      const { result, shown } = yield* turnOn(vllmWithoutContinue(REST))
      assert.strictEqual(result.status, "completed")
      assert.strictEqual(shown, POSTED + REST)
    }))

  it.live("a server that refuses the instruction too: the second refusal is a real error, not a loop", () =>
    Effect.gen(function*() {
      const refuseAll: FakeHandler = () => ({ status: 400, headers: { "content-type": "application/json" }, parts: [{ write: "{\"error\":{\"message\":\"bad request\"}}" }] })
      const { result, server, shown } = yield* turnOn(refuseAll)
      assert.strictEqual(result.status, "error")
      assert.strictEqual(shown, POSTED)
      assert.strictEqual(server.requests.length, 3, "primary, the refused prefill, one retry")
    }))
})
