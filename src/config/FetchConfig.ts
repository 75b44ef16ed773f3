import { Config, Context, Duration, Layer, Option } from "effect"
import { productionSetting } from "./RunEnv"
import { flagSetting, intSetting, integerConfig, listSetting, millisSetting } from "./settings"

/** fetch_url / safe_http settings (docs/architecture.md, fetch_url and safe_http). */
export interface FetchSettings {
  /** `RUN_ENV=production`. */
  readonly production: boolean
  /** Private, loopback and reserved addresses may be fetched (not production, or the opt-in). */
  readonly allowPrivateNetwork: boolean
  /** `FETCH_URL_ENGINE_ORDER` as written (trimmed, lower-cased); resolved by the fetch_url tool. */
  readonly engineOrder: ReadonlyArray<string>
  /** Characters of page content returned per call (`FETCH_URL_MAX_CONTENT_LENGTH`). */
  readonly maxContentLength: number
  /** Whole safe_http request, redirects included (`FETCH_URL_TIMEOUT_MS`). */
  readonly timeout: Duration.Duration
  /** Hard cap on downloaded body bytes after decompression (`MAX_FETCH_SIZE_MB`). */
  readonly maxBodyBytes: number
  /** Redirect hops followed (`USER_REMOTE_FETCH_MAX_REDIRECTS`). */
  readonly maxRedirects: number
  readonly crawl4aiBaseUrl: Option.Option<string>
}

const MIB = 1024 * 1024


/** Private networks are allowed with `RUN_ENV=development`, or with the opt-in; never otherwise. */
export const allowPrivateNetworkSetting: Config.Config<boolean> = Config.all({
  production: productionSetting,
  optIn: flagSetting("FETCH_URL_ALLOW_PRIVATE_NETWORK")
}).pipe(Config.map(({ optIn, production }) => !production || optIn))

const makeFetchSettings = (options: {
  readonly production: boolean
  readonly allowPrivateNetwork?: boolean
}, overrides: Partial<Omit<FetchSettings, "production" | "allowPrivateNetwork">> = {}): FetchSettings => ({
  production: options.production,
  allowPrivateNetwork: options.allowPrivateNetwork ?? !options.production,
  engineOrder: [],
  maxContentLength: 50_000,
  timeout: Duration.millis(15_000),
  maxBodyBytes: (options.production ? 5 : 50) * MIB,
  maxRedirects: 3,
  crawl4aiBaseUrl: Option.none(),
  ...overrides
})

const fromEnv: Config.Config<FetchSettings> = Config.all({
  production: productionSetting,
  allowPrivateNetwork: allowPrivateNetworkSetting,
  engineOrder: Config.map(listSetting("FETCH_URL_ENGINE_ORDER"), (names) => names.map((name) => name.toLowerCase())),
  maxContentLength: intSetting("FETCH_URL_MAX_CONTENT_LENGTH", { default: 50_000, min: 1 }),
  timeout: millisSetting("FETCH_URL_TIMEOUT_MS", { default: 15_000, min: 1_000 }),
  maxFetchMb: Config.option(integerConfig("MAX_FETCH_SIZE_MB")),
  // A positive integer; anything else falls back to the default.
  maxRedirects: integerConfig("USER_REMOTE_FETCH_MAX_REDIRECTS").pipe(
    Config.withDefault(3),
    Config.map((value) => (value >= 1 ? value : 3))
  ),
  crawl4aiBaseUrl: Config.option(Config.String("CRAWL4AI_BASE_URL")).pipe(Config.map(Option.filter((text) => text.length > 0)))
}).pipe(
  Config.map(({ maxFetchMb, ...rest }) => ({
    ...rest,
    maxBodyBytes: Math.max(1, Option.getOrElse(maxFetchMb, () => (rest.production ? 5 : 50))) * MIB,
    crawl4aiBaseUrl: Option.map(rest.crawl4aiBaseUrl, (url) => url.trim())
  }))
)

export class FetchConfig extends Context.Service<FetchConfig, FetchSettings>()("loopcord/config/FetchConfig") {
  static readonly layer = Layer.effect(FetchConfig, fromEnv)
  /** Explicit settings, for tests and embedding. */
  static readonly make = (
    options: { readonly production: boolean; readonly allowPrivateNetwork?: boolean },
    overrides: Partial<Omit<FetchSettings, "production" | "allowPrivateNetwork">> = {}
  ) => Layer.succeed(FetchConfig, makeFetchSettings(options, overrides))
}
