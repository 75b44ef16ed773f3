import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Anthropic from "../../src/provider/anthropic/Anthropic"
import * as Gemini from "../../src/provider/google/Gemini"
import * as OpenAiCompatible from "../../src/provider/openai/OpenAiCompatible"
import { messageDelta, messageStart, messageStop, textBlock, anthropicStream } from "../support/fakeProviders/anthropic"
import { fakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { geminiFinish, geminiStream, geminiText } from "../support/fakeProviders/gemini"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { buildModel, collect, httpClients, request } from "./harness"

/** Trace-context headers of W3C, Zipkin (single and multi) and Jaeger: none may reach a vendor. */
const traceHeaders = ["traceparent", "tracestate", "b3", "x-b3-traceid", "x-b3-spanid", "x-b3-sampled", "uber-trace-id"]

const providers = [
  {
    name: "openai-compatible",
    layer: (url: string) => OpenAiCompatible.layer({ baseUrl: `${url}/v1` }),
    answer: () => openAiStream([textChunk("hi"), finishChunk("stop")])
  },
  {
    name: "anthropic",
    layer: (url: string) => Anthropic.layer({ baseUrl: url }),
    answer: () => anthropicStream([messageStart(), ...textBlock(0, ["hi"]), messageDelta("end_turn", 1), messageStop()])
  },
  {
    name: "google",
    layer: (url: string) => Gemini.layer({ baseUrl: url }),
    answer: () => geminiStream([geminiText("hi"), geminiFinish("STOP")])
  }
] as const

describe("providers never send trace context to the vendor", () => {
  for (const provider of providers) {
    for (const [clientName, http] of httpClients) {
      it.live(`${provider.name} over ${clientName}: no traceparent / b3 header, even inside a span`, () =>
        Effect.gen(function*() {
          const server = yield* fakeLlmServer()
          const model = yield* buildModel(provider.layer(server.url), http)
          server.enqueue(provider.answer())
          // Inside a span the platform client would propagate it unless told not to.
          const result = yield* collect(model, request({ model: "gemini-2.5-flash" })).pipe(
            Effect.withSpan("a caller's span"),
            Effect.withTracerEnabled(true)
          )
          assert.isUndefined(result.error)
          assert.strictEqual(result.text, "hi")
          assert.strictEqual(server.requests.length, 1)
          const headers = server.requests[0]!.headers
          for (const name of traceHeaders) assert.isUndefined(headers[name], `${name} was sent`)
        }))
    }
  }
})
