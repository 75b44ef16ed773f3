import { assert, describe, it } from "vitest"
import { contextOverflowOf, overflowFactsOf } from "../../src/provider/contextOverflow"
import { fromStatus, fromStreamErrorPayload } from "../../src/provider/providerErrors"

/** The bodies each vendor sends when a request is longer than the window (as they send them). */
export const refusalBodies = {
  openai: {
    error: {
      message: "This model's maximum context length is 32000 tokens. However, your messages resulted in 41674 tokens. Please reduce the length of the messages.",
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded"
    }
  },
  anthropic: { type: "error", error: { type: "invalid_request_error", message: "prompt is too long: 41674 tokens > 32000 maximum" } },
  anthropicWithMaxTokens: {
    type: "error",
    error: { type: "invalid_request_error", message: "input length and `max_tokens` exceed context limit: 30000 + 8192 > 32000, decrease input length or `max_tokens` and try again" }
  },
  gemini: {
    error: { code: 400, message: "The input token count (41674) exceeds the maximum number of tokens allowed (32000).", status: "INVALID_ARGUMENT" }
  },
  llamaCpp: {
    error: { code: 400, message: "the request exceeds the available context size, try increasing it", type: "exceed_context_size_error", n_prompt_tokens: 41674, n_ctx: 32000 }
  },
  vllm: {
    object: "error",
    message: "This model's maximum context length is 32000 tokens. However, you requested 41674 tokens (39674 in the messages, 2000 in the completion). Please reduce the length of the messages or completion.",
    type: "BadRequestError",
    param: null,
    code: 400
  },
  openRouter: {
    error: {
      message: "This endpoint's maximum context length is 32000 tokens. However, you requested about 41674 tokens (39674 of text input, 2000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.",
      code: 400,
      metadata: { provider_name: null }
    }
  },
  mistral: { object: "error", message: "Prompt contains 41674 tokens and 0 draft tokens, too large for model with 32000 maximum context length", type: "invalid_request_error", code: 3051 }
} as const

const refuse = (body: unknown, status = 400) =>
  fromStatus({ provider: "p", status, headers: {}, body: JSON.stringify(body), nowMillis: 0 })

describe("context-length refusals are their own class [issue 23]", () => {
  it("every vendor's refusal is ContextOverflow, with the window and the counted prompt", () => {
    for (const [vendor, body] of Object.entries(refusalBodies)) {
      const error = refuse(body)
      assert.strictEqual(error.reason, "ContextOverflow", vendor)
      assert.strictEqual(error.overflow?.window, 32000, vendor)
      assert.strictEqual(error.overflow?.promptTokens, vendor === "anthropicWithMaxTokens" ? 30000 : 41674, vendor)
      // Operators still read the vendor's words.
      const said = "error" in body && typeof body.error === "object" ? body.error.message : "message" in body ? body.message : ""
      assert.include(error.detail, said.slice(0, 40), vendor)
    }
  })

  it("an older llama.cpp refusal without numbers, and OpenAI's window-only text, are recognised", () => {
    const old = refuse({ error: { code: 400, message: "the request exceeds the available context size. try increasing the context size or enable context shift", type: "invalid_request_error" } })
    assert.strictEqual(old.reason, "ContextOverflow")
    assert.deepStrictEqual(old.overflow, {})
    const responses = refuse({ error: { message: "Your input exceeds the context window of this model. Please adjust your input and try again.", type: "invalid_request_error", code: "context_length_exceeded" } })
    assert.strictEqual(responses.reason, "ContextOverflow")
  })

  it("other 4xx refusals keep their reason", () => {
    assert.strictEqual(refuse({ error: { message: "Invalid value for 'temperature'", type: "invalid_request_error" } }).reason, "BadRequest")
    assert.strictEqual(refuse({ error: { message: "Incorrect API key provided" } }, 401).reason, "Auth")
    assert.strictEqual(refuse({ error: { message: "Rate limit reached" } }, 429).reason, "RateLimit")
  })

  it("an error event inside a stream (Anthropic, OpenRouter) is recognised too", () => {
    const anthropic = fromStreamErrorPayload("anthropic", { error: refusalBodies.anthropic.error })
    assert.strictEqual(anthropic.reason, "ContextOverflow")
    assert.strictEqual(anthropic.overflow?.window, 32000)
    const gemini = fromStreamErrorPayload("google", refusalBodies.gemini)
    assert.strictEqual(gemini.reason, "ContextOverflow")
    assert.strictEqual(fromStreamErrorPayload("x", { error: { message: "overloaded", type: "overloaded_error" } }).reason, "Server")
  })

  it("implausible numbers are not believed, and a huge body is matched on its start only", () => {
    assert.deepStrictEqual(overflowFactsOf("maximum context length is 12 tokens"), {})
    assert.deepStrictEqual(overflowFactsOf("maximum context length is 9999999999999 tokens"), {})
    assert.strictEqual(contextOverflowOf({}, `${"x".repeat(10_000)} maximum context length is 32000 tokens`), undefined)
    assert.deepStrictEqual(overflowFactsOf("maximum context length is 131,072 tokens"), { window: 131072 })
  })
})
