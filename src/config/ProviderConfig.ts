import { Config, Context, Result, Layer, Option, Redacted } from "effect"
import { invalidSetting, mapOrFail } from "./settingError"

/** The model providers loopcord ships (`LLM_PROVIDER`). */
export const PROVIDER_KINDS = ["openai-compatible", "openai-responses", "anthropic", "google", "novelai", "scripted"] as const
export type ProviderKind = typeof PROVIDER_KINDS[number]

/** Which provider, where, with which keys and models. */
interface ProviderSettings {
  readonly provider: ProviderKind
  /** `LLM_BASE_URL` (or the vendor's variable); undefined means the provider's public default. */
  readonly baseUrl: string | undefined
  /** `LLM_API_KEYS` (or the vendor's key): the rotation pool, never logged. Empty for keyless endpoints. */
  readonly apiKeys: ReadonlyArray<Redacted.Redacted<string>>
  /** `LLM_MODELS`: the primary model, then the fallback chain. Never empty. */
  readonly models: ReadonlyArray<string>
  readonly toolCalling: "native" | "verbatim"
}

/** The scripted provider ignores the model name; reports still need one. */
const SCRIPTED_DEFAULT_MODEL = "scripted"

const trimmedList = (raw: string) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)

const provider: Config.Config<ProviderKind> = Config.String("LLM_PROVIDER").pipe(
  Config.withDefault("openai-compatible"),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    const kind = PROVIDER_KINDS.find((candidate) => candidate === value)
    return kind === undefined
      ? Result.fail(invalidSetting("LLM_PROVIDER", `must be one of ${PROVIDER_KINDS.join(", ")} (got "${raw}")`))
      : Result.succeed(kind)
  })
)

/**
 * Each vendor's conventional variables, read when `LLM_API_KEYS` / `LLM_BASE_URL` are unset (so
 * an environment set up for the vendor's own SDK works as is). Add a row for a new provider kind.
 */
const VENDOR_FALLBACKS: Partial<Record<ProviderKind, { readonly apiKey: string; readonly baseUrl?: string }>> = {
  "openai-compatible": { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  "openai-responses": { apiKey: "OPENAI_API_KEY", baseUrl: "OPENAI_BASE_URL" },
  anthropic: { apiKey: "ANTHROPIC_API_KEY", baseUrl: "ANTHROPIC_BASE_URL" },
  google: { apiKey: "GEMINI_API_KEY" }
}

const fallbackNames = (pick: "apiKey" | "baseUrl"): ReadonlyArray<string> => [
  ...new Set(Object.values(VENDOR_FALLBACKS).flatMap((row) => (row[pick] === undefined ? [] : [row[pick]])))
]

/** Unset and blank are the same: nothing configured. */
const optionalText = (name: string): Config.Config<Option.Option<string>> =>
  Config.option(Config.String(name)).pipe(Config.map((value) => Option.filter(Option.map(value, (raw) => raw.trim()), (raw) => raw.length > 0)))

/** Every vendor variable of one kind, read whatever the provider (a lookup is free; only the chosen one is validated). */
const vendorValues = (pick: "apiKey" | "baseUrl"): Config.Config<Readonly<Record<string, Option.Option<string>>>> =>
  Config.all(Object.fromEntries(fallbackNames(pick).map((name) => [name, optionalText(name)])))

const httpUrl = (name: string, url: string): Result.Result<string, Config.ConfigError> =>
  /^https?:\/\/[^\s/]+/.test(url)
    ? Result.succeed(url)
    : Result.fail(invalidSetting(name, `must be an http(s) URL such as http://127.0.0.1:11434/v1 (got "${url}")`))

/**
 * `LLM_BASE_URL`, else the provider's vendor variable (`OPENAI_BASE_URL`, `ANTHROPIC_BASE_URL`);
 * undefined means the provider's public default. Parsed here only (the providers read this value).
 */
export const baseUrlSetting: Config.Config<string | undefined> = Config.all({
  provider,
  configured: optionalText("LLM_BASE_URL"),
  vendor: vendorValues("baseUrl")
}).pipe(
  mapOrFail(({ configured, provider, vendor }) => {
    if (Option.isSome(configured)) return httpUrl("LLM_BASE_URL", configured.value)
    const name = VENDOR_FALLBACKS[provider]?.baseUrl
    const fallback = name === undefined ? Option.none() : vendor[name] ?? Option.none()
    return name !== undefined && Option.isSome(fallback) ? httpUrl(name, fallback.value) : Result.succeed(undefined)
  })
)

/** `LLM_API_KEYS`, else the provider's vendor key (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `GEMINI_API_KEY`). */
const apiKeys: Config.Config<ReadonlyArray<Redacted.Redacted<string>>> = Config.all({
  provider,
  configured: Config.option(Config.Redacted("LLM_API_KEYS")),
  vendor: vendorValues("apiKey")
}).pipe(
  Config.map(({ configured, provider, vendor }) => {
    const listed = Option.match(configured, { onNone: () => [], onSome: (secret) => trimmedList(Redacted.value(secret)) })
    if (listed.length > 0) return listed.map((key) => Redacted.make(key))
    const name = VENDOR_FALLBACKS[provider]?.apiKey
    const fallback = name === undefined ? Option.none() : vendor[name] ?? Option.none()
    return Option.match(fallback, { onNone: () => [], onSome: (key) => [Redacted.make(key)] })
  })
)

/** `LLM_TOOL_CALLING`: `native` or `verbatim`, any case. Parsed here only (the providers read this value). */
export const toolCallingSetting: Config.Config<"native" | "verbatim"> = Config.String("LLM_TOOL_CALLING").pipe(
  Config.withDefault("native"),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    return value === "native" || value === "verbatim"
      ? Result.succeed<"native" | "verbatim">(value)
      : Result.fail(invalidSetting("LLM_TOOL_CALLING", `must be native or verbatim (got "${raw}")`))
  })
)

/** Every `LLM_*` variable, validated: a bad value fails start-up naming its variable. */
export const providerSettings: Config.Config<ProviderSettings> = Config.all({
  provider,
  baseUrl: baseUrlSetting,
  apiKeys,
  rawModels: Config.String("LLM_MODELS").pipe(Config.withDefault("")),
  toolCalling: toolCallingSetting
}).pipe(
  mapOrFail(({ rawModels, ...rest }) => {
    const listed = trimmedList(rawModels)
    if (listed.length > 0) return Result.succeed({ ...rest, models: listed })
    if (rest.provider === "scripted") return Result.succeed({ ...rest, models: [SCRIPTED_DEFAULT_MODEL] })
    return Result.fail(invalidSetting("LLM_MODELS", `required for LLM_PROVIDER=${rest.provider}: the primary model, then fallbacks, comma-separated`
    ))
  })
)

/**
 * `LLM_SCRIPT` (`LLM_PROVIDER=scripted`): the script, inline JSON or a path to a JSON file;
 * the scripted provider decodes it (its errors name this variable).
 */
export const scriptSourceSetting: Config.Config<Option.Option<string>> = optionalText("LLM_SCRIPT")

export class ProviderConfig extends Context.Service<ProviderConfig, ProviderSettings>()("loopcord/config/ProviderConfig") {
  static readonly layer = Layer.effect(ProviderConfig, providerSettings)
}
