import type * as HttpClient from "effect/http/HttpClient"
import * as HttpClientRequest from "effect/http/HttpClientRequest"
import { Duration, Effect, Option, Predicate, Redacted, Stream } from "effect"
import { joinUrl } from "../providerHttp"

/**
 * Asks a model's server for the window it runs the model with. Self-hosted servers say it in
 * their own endpoints; a window a server states wins over the family's published one (a local
 * server often loads a model with a smaller window):
 *
 * - llama.cpp `GET /props`: `n_ctx` and `default_generation_settings.n_ctx` (per slot);
 * - Ollama `POST /api/show`: `num_ctx` in `parameters`, else `model_info.<arch>.context_length`
 *   capped at Ollama's default `num_ctx`, since Ollama runs a model with that unless told
 *   otherwise and silently drops the start of a longer prompt instead of refusing it;
 * - LM Studio `GET /api/v0/models`: `loaded_context_length`, else `max_context_length`;
 * - the OpenAI-style model list `GET {base}/models`: `context_length` (OpenRouter, Together),
 *   `top_provider.context_length`, `context_window` (Groq), `max_model_len` (vLLM).
 *
 * Every answer is untrusted: each probe has a deadline and a body cap, and anything unexpected
 * is no answer. The probes run at once; the first in the order above that answers wins.
 */

/** Ollama's `num_ctx` when neither the Modelfile nor the request sets one. */
const OLLAMA_DEFAULT_NUM_CTX = 4_096

const MIN_WINDOW = 256
const MAX_WINDOW = 100_000_000
/** Entries of a model list looked at, at most. */
const MAX_LISTED_MODELS = 5_000
/** Body caps: a model list (OpenRouter's holds every model it routes) and the small endpoints. */
const MAX_LIST_BODY_CHARS = 8 * 1024 * 1024
const MAX_BODY_CHARS = 256 * 1024

const windowValue = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= MIN_WINDOW && value <= MAX_WINDOW ? value : undefined

const smallest = (values: ReadonlyArray<number | undefined>): number | undefined => {
  const known = values.filter((value): value is number => value !== undefined)
  return known.length === 0 ? undefined : Math.min(...known)
}

/** llama.cpp `/props`: the per-slot window (the smaller when both fields are there). */
export const llamaCppPropsWindow = (json: unknown): number | undefined => {
  if (!Predicate.isObject(json)) return undefined
  const settings = Predicate.isObject(json.default_generation_settings) ? json.default_generation_settings : {}
  return smallest([windowValue(json.n_ctx), windowValue(settings.n_ctx)])
}

/** Ollama `/api/show`: `num_ctx` when the model sets one, else its trained length capped at Ollama's default. */
export const ollamaShowWindow = (json: unknown): number | undefined => {
  if (!Predicate.isObject(json)) return undefined
  if (typeof json.parameters === "string") {
    const match = /(?:^|\n)\s*num_ctx\s+(\d+)/.exec(json.parameters.slice(0, 64 * 1024))
    const set = windowValue(match === null ? undefined : Number(match[1]))
    if (set !== undefined) return set
  }
  if (!Predicate.isObject(json.model_info)) return undefined
  const trained = Object.entries(json.model_info).slice(0, 2_000)
    .find(([key]) => key.endsWith(".context_length"))?.[1]
  const length = windowValue(trained)
  return length === undefined ? undefined : Math.min(length, OLLAMA_DEFAULT_NUM_CTX)
}

const listedModel = (json: unknown, model: string): Record<string, unknown> | undefined => {
  if (!Predicate.isObject(json) || !Array.isArray(json.data)) return undefined
  const wanted = model.toLowerCase()
  return json.data.slice(0, MAX_LISTED_MODELS).find((entry): entry is Record<string, unknown> =>
    Predicate.isObject(entry) && typeof entry.id === "string" && entry.id.toLowerCase() === wanted)
}

/** LM Studio `/api/v0/models`: the window the model is loaded with, else its largest. */
const lmStudioWindow = (json: unknown, model: string): number | undefined => {
  const entry = listedModel(json, model)
  return entry === undefined ? undefined : windowValue(entry.loaded_context_length) ?? windowValue(entry.max_context_length)
}

/** An OpenAI-style `/models` list with a window per model (OpenRouter, Together, Groq, vLLM). */
const modelListWindow = (json: unknown, model: string): number | undefined => {
  const entry = listedModel(json, model)
  if (entry === undefined) return undefined
  const top = Predicate.isObject(entry.top_provider) ? entry.top_provider : {}
  return windowValue(entry.context_length) ?? windowValue(top.context_length) ?? windowValue(entry.context_window) ??
    windowValue(entry.max_model_len) ?? windowValue(entry.max_context_length)
}

/** Public APIs whose answers say nothing of windows (the built-in table covers their models). */
const SILENT_HOSTS = ["api.openai.com", "api.deepseek.com", "api.anthropic.com", "googleapis.com"]
/** Public APIs that are not self-hosted servers: only their model list is asked. */
const PUBLIC_HOSTS = ["openrouter.ai", "api.mistral.ai", "api.groq.com", "api.together.xyz", "api.fireworks.ai", "api.x.ai", "api.perplexity.ai", "api.cerebras.ai"]

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname.toLowerCase()
  } catch {
    return ""
  }
}

const onHost = (host: string, names: ReadonlyArray<string>) => names.some((name) => host === name || host.endsWith(`.${name}`))

interface DiscoveryTarget {
  /** The OpenAI-compatible base URL, up to the version segment (`http://127.0.0.1:8080/v1`). */
  readonly baseUrl: string
  /** Sent to the model list only (the same host every request of the model goes to). */
  readonly apiKey: Redacted.Redacted<string> | undefined
  /** One probe's deadline. */
  readonly timeout: Duration.Input
}

/** Whether asking `baseUrl` can tell anything at all. */
const mayDiscover = (baseUrl: string): boolean => !onHost(hostOf(baseUrl), SILENT_HOSTS)

/** The server's root: the base URL without its `/v1` (where llama.cpp, Ollama and LM Studio answer). */
const serverRoot = (baseUrl: string): string => baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")

type ReadFailure = "status" | "too large" | "not json" | "timeout"

const readJson = (
  client: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  maxChars: number,
  timeout: Duration.Input
): Effect.Effect<Option.Option<unknown>> =>
  Effect.gen(function*() {
    const response = yield* client.execute(request)
    if (response.status < 200 || response.status >= 300) return yield* Effect.fail<ReadFailure>("status")
    const read = { text: "", over: false }
    yield* Stream.runForEachWhile(Stream.decodeText(response.stream), (piece) =>
      Effect.sync(() => {
        if (read.text.length + piece.length > maxChars) {
          read.text = ""
          read.over = true
        } else {
          read.text += piece
        }
        return !read.over
      }))
    if (read.over) return yield* Effect.fail<ReadFailure>("too large")
    return yield* Effect.try({ try: (): unknown => JSON.parse(read.text), catch: (): ReadFailure => "not json" })
  }).pipe(
    Effect.scoped,
    Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail<ReadFailure>("timeout") }),
    Effect.option
  )

/**
 * The window `model` runs with on the server behind `target`, or undefined when no probe
 * answered with one within its deadline. Never fails.
 */
export const discoverWindow = (client: HttpClient.HttpClient, target: DiscoveryTarget, model: string): Effect.Effect<number | undefined> => {
  if (!mayDiscover(target.baseUrl)) return Effect.succeed(undefined)
  const selfHosted = !onHost(hostOf(target.baseUrl), PUBLIC_HOSTS)
  const root = serverRoot(target.baseUrl)
  const get = (url: string, maxChars: number, headers: Record<string, string> = {}) =>
    readJson(client, HttpClientRequest.get(url, { headers: { accept: "application/json", ...headers } }), maxChars, target.timeout)
  const auth: Record<string, string> = target.apiKey === undefined ? {} : { authorization: `Bearer ${Redacted.value(target.apiKey)}` }
  const probes: ReadonlyArray<Effect.Effect<number | undefined>> = [
    ...(selfHosted
      ? [
        Effect.map(get(joinUrl(root, "props"), MAX_BODY_CHARS), Option.flatMapNullishOr(llamaCppPropsWindow)),
        Effect.map(get(joinUrl(root, "api/v0/models"), MAX_BODY_CHARS), Option.flatMapNullishOr((json) => lmStudioWindow(json, model))),
        Effect.map(
          readJson(client, HttpClientRequest.post(joinUrl(root, "api/show")).pipe(HttpClientRequest.bodyJsonUnsafe({ model, name: model })), MAX_BODY_CHARS, target.timeout),
          Option.flatMapNullishOr(ollamaShowWindow)
        )
      ]
      : []),
    Effect.map(get(joinUrl(target.baseUrl, "models"), MAX_LIST_BODY_CHARS, auth), Option.flatMapNullishOr((json) => modelListWindow(json, model)))
  ].map((probe) => Effect.map(probe, Option.getOrUndefined))
  return Effect.map(Effect.all(probes, { concurrency: "unbounded" }), (answers) => answers.find((answer) => answer !== undefined))
}
