import { Config, Context, Duration, Layer, Option, Redacted } from "effect"

/** web_search backends (docs/architecture.md, Tools and the outside world). */
export interface SearchSettings {
  /** SearXNG instance with the JSON format enabled (`SEARXNG_BASE_URL`). */
  readonly searxngBaseUrl: Option.Option<string>
  /** Brave Search API key (`BRAVE_API_KEY`); Brave is used only when set. */
  readonly braveApiKey: Option.Option<Redacted.Redacted<string>>
  readonly braveApiBaseUrl: string
  /** DuckDuckGo HTML endpoint base, the text-only fallback that needs no key. */
  readonly duckduckgoBaseUrl: string
  /** Per backend request. */
  readonly timeout: Duration.Duration
  /** Response body cap per backend request. */
  readonly maxResponseBytes: number
}

const defaultSearchSettings: SearchSettings = {
  searxngBaseUrl: Option.none(),
  braveApiKey: Option.none(),
  braveApiBaseUrl: "https://api.search.brave.com",
  duckduckgoBaseUrl: "https://html.duckduckgo.com",
  timeout: Duration.seconds(15),
  maxResponseBytes: 4 * 1024 * 1024
}

const trimmedUrl = (name: string) =>
  Config.option(Config.String(name)).pipe(Config.map((value) => Option.map(Option.filter(value, (text) => text.length > 0), (url) => url.trim().replace(/\/+$/, ""))))

const fromEnv: Config.Config<SearchSettings> = Config.all({
  searxngBaseUrl: trimmedUrl("SEARXNG_BASE_URL"),
  braveApiKey: Config.option(Config.Redacted("BRAVE_API_KEY")).pipe(
    Config.map(Option.filter((key) => Redacted.value(key).trim() !== ""))
  ),
  braveApiBaseUrl: trimmedUrl("BRAVE_API_BASE_URL").pipe(Config.map(Option.getOrElse(() => defaultSearchSettings.braveApiBaseUrl))),
  duckduckgoBaseUrl: trimmedUrl("DUCKDUCKGO_BASE_URL").pipe(
    Config.map(Option.getOrElse(() => defaultSearchSettings.duckduckgoBaseUrl))
  )
}).pipe(Config.map((settings) => ({ ...defaultSearchSettings, ...settings })))

export class SearchConfig extends Context.Service<SearchConfig, SearchSettings>()("loopcord/config/SearchConfig") {
  static readonly layer = Layer.effect(SearchConfig, fromEnv)
  static readonly make = (overrides: Partial<SearchSettings> = {}) =>
    Layer.succeed(SearchConfig, { ...defaultSearchSettings, ...overrides })
}
