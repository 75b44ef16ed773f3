import { Config, ConfigError, Context, Effect, Either, Layer, Option, Redacted } from "effect"
import { RoutePlan } from "../loop/RoutePlan"

/** The model providers loopcord ships (design §5.2 `LLM_PROVIDER`). */
export const PROVIDER_KINDS = ["openai-compatible", "openai-responses", "anthropic", "google", "novelai", "scripted"] as const
export type ProviderKind = typeof PROVIDER_KINDS[number]

/** Which provider, where, with which keys and models (design §5.2). */
export interface ProviderSettings {
  readonly provider: ProviderKind
  /** `LLM_BASE_URL`; undefined means the provider's public default. */
  readonly baseUrl: string | undefined
  /** `LLM_API_KEYS`: the rotation pool, never logged. Empty for keyless endpoints. */
  readonly apiKeys: ReadonlyArray<Redacted.Redacted<string>>
  /** `LLM_MODELS`: the primary model, then the fallback chain. Never empty. */
  readonly models: ReadonlyArray<string>
  readonly toolCalling: "native" | "verbatim"
}

/** The scripted provider ignores the model name; reports still need one. */
export const SCRIPTED_DEFAULT_MODEL = "scripted"

const trimmedList = (raw: string) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)

const provider: Config.Config<ProviderKind> = Config.string("LLM_PROVIDER").pipe(
  Config.withDefault("openai-compatible"),
  Config.mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    const kind = PROVIDER_KINDS.find((candidate) => candidate === value)
    return kind === undefined
      ? Either.left(ConfigError.InvalidData(["LLM_PROVIDER"], `must be one of ${PROVIDER_KINDS.join(", ")} (got "${raw}")`))
      : Either.right(kind)
  })
)

const baseUrl: Config.Config<string | undefined> = Config.option(Config.string("LLM_BASE_URL")).pipe(
  Config.mapOrFail((value) => {
    const url = Option.getOrUndefined(Option.filter(Option.map(value, (raw) => raw.trim()), (raw) => raw.length > 0))
    if (url === undefined) return Either.right(undefined)
    return /^https?:\/\/[^\s/]+/.test(url)
      ? Either.right(url)
      : Either.left(ConfigError.InvalidData(["LLM_BASE_URL"], `must be an http(s) URL such as http://127.0.0.1:11434/v1 (got "${url}")`))
  })
)

const apiKeys: Config.Config<ReadonlyArray<Redacted.Redacted<string>>> = Config.option(Config.redacted("LLM_API_KEYS")).pipe(
  Config.map((value) =>
    Option.match(value, {
      onNone: () => [],
      onSome: (secret) => trimmedList(Redacted.value(secret)).map((key) => Redacted.make(key))
    })
  )
)

const toolCalling = Config.string("LLM_TOOL_CALLING").pipe(
  Config.withDefault("native"),
  Config.mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    return value === "native" || value === "verbatim"
      ? Either.right<"native" | "verbatim">(value)
      : Either.left(ConfigError.InvalidData(["LLM_TOOL_CALLING"], `must be native or verbatim (got "${raw}")`))
  })
)

/** Every `LLM_*` variable, validated: a bad value fails start-up naming its variable. */
export const providerSettings: Config.Config<ProviderSettings> = Config.all({
  provider,
  baseUrl,
  apiKeys,
  rawModels: Config.string("LLM_MODELS").pipe(Config.withDefault("")),
  toolCalling
}).pipe(
  Config.mapOrFail(({ rawModels, ...rest }) => {
    const listed = trimmedList(rawModels)
    if (listed.length > 0) return Either.right({ ...rest, models: listed })
    if (rest.provider === "scripted") return Either.right({ ...rest, models: [SCRIPTED_DEFAULT_MODEL] })
    return Either.left(ConfigError.MissingData(
      ["LLM_MODELS"],
      `required for LLM_PROVIDER=${rest.provider}: the primary model, then fallbacks, comma-separated`
    ))
  })
)

export class ProviderConfig extends Context.Tag("loopcord/config/ProviderConfig")<ProviderConfig, ProviderSettings>() {
  static readonly layer = Layer.effect(ProviderConfig, providerSettings)
}

/** The route plan of the outer tier, from the provider settings. */
export const routePlanLayer: Layer.Layer<RoutePlan, never, ProviderConfig> = Layer.effect(
  RoutePlan,
  Effect.map(ProviderConfig, (settings) => ({ models: settings.models, keys: settings.apiKeys }))
)
