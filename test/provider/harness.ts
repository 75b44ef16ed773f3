import type { HttpClient } from "effect/http"
import { NodeHttpClient } from "@effect/platform-node"
import { Context, Effect, Result, Layer, Redacted, Stream } from "effect"
import type { ChatMessage } from "../../src/domain/ChatMessage"
import type { ProviderError } from "../../src/domain/ProviderError"
import type { ProviderEvent } from "../../src/domain/ProviderEvent"
import type { ToolDeclaration } from "../../src/domain/ToolDeclaration"
import type { GenerationRequest } from "../../src/provider/GenerationRequest"
import { LanguageModel } from "../../src/provider/LanguageModel"
import { providerHttpClient } from "../../src/provider/providerHttpClient"

/** The real Node HTTP client the providers get in main (the lean undici client over the capped Agent). */
export const HttpLive: Layer.Layer<HttpClient.HttpClient> = providerHttpClient()

export const userMessage = (content: string, name?: string): ChatMessage => ({
  role: "user",
  content,
  ...(name === undefined ? {} : { name })
})

export const readFileTool: ToolDeclaration = {
  name: "read_file",
  description: "Read a media file",
  parameters: { type: "object", properties: { media_id: { type: "string" } }, required: ["media_id"] }
}

export const request = (overrides: Partial<GenerationRequest> = {}): GenerationRequest => ({
  model: "fake-model",
  apiKey: Redacted.make("sk-test-key"),
  system: "You are loopcord.",
  messages: [userMessage("hello")],
  tools: [],
  functionHistory: [],
  ...overrides
})

export interface Collected {
  readonly events: ReadonlyArray<ProviderEvent>
  readonly error: ProviderError | undefined
  readonly text: string
}

/** Runs one pass to the end and collects its events and its failure, if any. */
export const collect = (model: LanguageModel["Service"], req: GenerationRequest) =>
  Effect.gen(function*() {
    const events: Array<ProviderEvent> = []
    const result = yield* model.stream(req).pipe(
      Stream.runForEach((event) => Effect.sync(() => events.push(event))),
      Effect.result
    )
    return {
      events,
      error: Result.isFailure(result) ? result.failure : undefined,
      text: events.flatMap((event) => (event._tag === "TextDelta" ? [event.text] : [])).join("")
    } satisfies Collected
  })

export const withoutKeepAlives = (events: ReadonlyArray<ProviderEvent>) => events.filter((event) => event._tag !== "KeepAlive")

/** Builds a model from a provider layer (over the real HTTP client), alive until the test's scope closes. */
export const buildModel = <E>(
  layer: Layer.Layer<LanguageModel, E, HttpClient.HttpClient>,
  http: Layer.Layer<HttpClient.HttpClient> = HttpLive
) => Effect.map(Layer.build(Layer.provide(layer, http)), (context) => Context.get(context, LanguageModel))

/** The providers' client (main's) and the platform's Node clients, undici and node:http, which providers also accept. */
export const httpClients = [
  ["loopcord undici", providerHttpClient()],
  ["platform undici", NodeHttpClient.layerUndici],
  ["node:http", NodeHttpClient.layerNodeHttp]
] as const

export const eventTags = (events: ReadonlyArray<ProviderEvent>) => events.map((event) => event._tag)

export const runCollect = <A, E>(stream: Stream.Stream<A, E>) => Stream.runCollect(stream)
