import * as HttpClient from "effect/http/HttpClient"
import { Clock, Deferred, Duration, Effect, Layer, Option, type Redacted, Ref, type Scope } from "effect"
import { ContextConfig, type ContextWindowSetting } from "../../config/ContextConfig"
import { ProviderConfig, type ProviderKind } from "../../config/ProviderConfig"
import { type ModelWindow, ModelWindows, type ModelWindowsShape } from "../ModelWindows"
import { providerHttpClient } from "../providerHttpClient"
import { discoverWindow } from "./windowDiscovery"
import { DEFAULT_CONTEXT_TOKENS, tableWindow } from "./windowTable"

export interface ModelWindowsOptions {
  readonly provider: ProviderKind
  readonly baseUrl: string | undefined
  /** The operator's first key, for a model list that wants one. */
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly setting: ContextWindowSetting
  /** Models asked about at start-up, in the background (the configured chain). */
  readonly models: ReadonlyArray<string>
  /** How long a pass waits for a model's first answer before it goes on with the table or the default. */
  readonly discoveryWait?: Duration.Input
  /** One probe's deadline. */
  readonly probeTimeout?: Duration.Input
  /** A server that gave no answer is asked again after this long (it may have been starting). */
  readonly retryAfter?: Duration.Input
}

/**
 * What each provider asks for as output when a request sets no `maxOutputTokens`, where that
 * counts against the window (the same value as `anthropic/Anthropic.ts` `defaultMaxTokens`,
 * kept here so this module does not load the Anthropic provider).
 */
export const DEFAULT_OUTPUT_TOKENS: Partial<Record<ProviderKind, number>> = { anthropic: 8_192 }

const DEFAULT_DISCOVERY_WAIT = Duration.seconds(2)
const DEFAULT_PROBE_TIMEOUT = Duration.seconds(5)
const DEFAULT_RETRY_AFTER = Duration.minutes(5)

/** Models remembered at most (learned windows, discovery answers): names come from settings and servers' chains. */
const MAX_REMEMBERED_MODELS = 512

interface Probe {
  readonly answer: Deferred.Deferred<number | undefined>
  readonly startedAt: number
}

const remember = <V>(map: ReadonlyMap<string, V>, key: string, value: V): ReadonlyMap<string, V> => {
  const next = new Map(map)
  next.delete(key)
  next.set(key, value)
  // The oldest goes first once the bound is reached.
  while (next.size > MAX_REMEMBERED_MODELS) next.delete(next.keys().next().value as string)
  return next
}

/**
 * Every model's window, most trusted first: a window a refusal named (learned), then
 * `LLM_CONTEXT_TOKENS`, then what its server says (OpenAI-compatible servers, asked once per
 * model in the background and cached), then the built-in table, then the conservative default.
 * The scripted provider has no window unless `LLM_CONTEXT_TOKENS` sets one.
 */
export const make = (options: ModelWindowsOptions): Effect.Effect<ModelWindowsShape, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const scope = yield* Effect.scope
    const learned = yield* Ref.make<ReadonlyMap<string, number>>(new Map())
    const probes = yield* Ref.make<ReadonlyMap<string, Probe>>(new Map())
    const wait = Duration.fromInputUnsafe(options.discoveryWait ?? DEFAULT_DISCOVERY_WAIT)
    const retryAfterMs = Duration.toMillis(options.retryAfter ?? DEFAULT_RETRY_AFTER)
    const baseUrl = options.baseUrl
    const discovers = options.provider === "openai-compatible" && baseUrl !== undefined
    const target = baseUrl === undefined
      ? undefined
      : { baseUrl, apiKey: options.apiKey, timeout: options.probeTimeout ?? DEFAULT_PROBE_TIMEOUT }

    const settingFor = (key: string) => options.setting.byModel.get(key) ?? options.setting.all

    /** The model's probe: started now when there is none, or when the last one found nothing long ago. */
    const probeFor = (key: string, model: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const existing = (yield* Ref.get(probes)).get(key)
        if (existing !== undefined) {
          const answered = yield* Deferred.poll(existing.answer)
          const stale = Option.isSome(answered) && (yield* answered.value) === undefined && now - existing.startedAt > retryAfterMs
          if (!stale) return existing.answer
        }
        const answer = yield* Deferred.make<number | undefined>()
        yield* Ref.update(probes, (all) => remember(all, key, { answer, startedAt: now }))
        if (target === undefined) return answer
        // In the app's scope: a probe outlives the turn that started it, and ends with the app.
        yield* discoverWindow(client, target, model).pipe(
          Effect.tap((tokens) =>
            tokens === undefined
              ? Effect.logDebug("the model's server did not say its context window")
              : Effect.logInfo(`the model's server runs it with a ${tokens}-token context window`)),
          Effect.annotateLogs({ model }),
          Deferred.into(answer),
          Effect.forkIn(scope)
        )
        return answer
      })

    const discovered = (key: string, model: string): Effect.Effect<number | undefined> =>
      Effect.flatMap(probeFor(key, model), (answer) =>
        Effect.map(Effect.timeoutOption(Deferred.await(answer), wait), Option.getOrUndefined))

    const output = DEFAULT_OUTPUT_TOKENS[options.provider]
    const withOutput = (window: ModelWindow): ModelWindow => (output === undefined ? window : { ...window, defaultOutputTokens: output })

    const windowOf = (model: string): Effect.Effect<ModelWindow | undefined> =>
      Effect.map(resolve(model), (window) => (window === undefined ? undefined : withOutput(window)))

    const resolve = (model: string): Effect.Effect<ModelWindow | undefined> =>
      Effect.gen(function*() {
        const key = model.trim().toLowerCase()
        const fromRefusal = (yield* Ref.get(learned)).get(key)
        if (fromRefusal !== undefined) return { tokens: fromRefusal, source: "learned" as const }
        const set = settingFor(key)
        if (set !== undefined) return { tokens: set, source: "setting" as const }
        if (options.provider === "scripted") return undefined
        if (discovers) {
          const said = yield* discovered(key, model)
          if (said !== undefined) return { tokens: said, source: "discovered" as const }
        }
        const published = tableWindow(model)
        return published === undefined
          ? { tokens: DEFAULT_CONTEXT_TOKENS, source: "default" as const }
          : { tokens: published, source: "table" as const }
      })

    const learn = (model: string, tokens: number) =>
      Ref.update(learned, (all) => {
        const key = model.trim().toLowerCase()
        const known = all.get(key)
        return known !== undefined && known <= tokens ? all : remember(all, key, tokens)
      })

    // The configured chain is asked at start-up, so the first turn rarely waits.
    if (discovers) yield* Effect.forEach(options.models, (model) => probeFor(model.trim().toLowerCase(), model), { discard: true })
    return { windowOf, learn } satisfies ModelWindowsShape
  })

/** From the environment: the provider settings and `LLM_CONTEXT_TOKENS`, probes over a small HTTP pool of their own. */
export const layer = Layer.effect(
  ModelWindows,
  Effect.gen(function*() {
    const provider = yield* ProviderConfig
    const context = yield* ContextConfig
    return yield* make({
      provider: provider.provider,
      baseUrl: provider.baseUrl,
      apiKey: provider.apiKeys[0],
      setting: context.windows,
      models: provider.models
    })
  })
).pipe(Layer.provide(providerHttpClient({ connections: 4 })))
