import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Result, Layer, Option, Redacted } from "effect"
import { settingsProvider } from "../../src/config/dotenv"
import { FetchConfig } from "../../src/config/FetchConfig"
import { SearchConfig } from "../../src/config/SearchConfig"
import { AddressPolicy, DnsResolver } from "../../src/fetch/AddressPolicy"

const withEnv = (env: Record<string, string>) => ConfigProvider.layer(settingsProvider(env))

const fetchSettings = (env: Record<string, string>) =>
  Effect.result(Effect.provide(FetchConfig, FetchConfig.layer.pipe(Layer.provide(withEnv(env)))))

describe("FetchConfig / SearchConfig", () => {
  it.effect("defaults (design decision 12): production, private networks closed, 5 MB cap, 15 s, 3 redirects, 50000 characters", () =>
    Effect.gen(function* () {
      const settings = Result.getOrThrow(yield* fetchSettings({}))
      assert.isTrue(settings.production)
      assert.isFalse(settings.allowPrivateNetwork)
      assert.strictEqual(settings.maxBodyBytes, 5 * 1024 * 1024)
      assert.strictEqual(Duration.toMillis(settings.timeout), 15_000)
      assert.strictEqual(settings.maxRedirects, 3)
      assert.strictEqual(settings.maxContentLength, 50_000)
      assert.deepStrictEqual(settings.engineOrder, [])
      assert.isTrue(Option.isNone(settings.crawl4aiBaseUrl))
    })
  )

  it.effect("RUN_ENV=development (explicit, any case) relaxes: private networks allowed, 50 MB cap", () =>
    Effect.gen(function* () {
      const settings = Result.getOrThrow(yield* fetchSettings({ RUN_ENV: " Development " }))
      assert.isFalse(settings.production)
      assert.isTrue(settings.allowPrivateNetwork)
      assert.strictEqual(settings.maxBodyBytes, 50 * 1024 * 1024)
      const typo = yield* fetchSettings({ RUN_ENV: "dev" })
      assert.isTrue(Result.isFailure(typo))
      if (Result.isFailure(typo)) assert.include(String(typo.failure), "RUN_ENV")
    })
  )

  it.effect("production: 5 MB cap, private blocked unless FETCH_URL_ALLOW_PRIVATE_NETWORK is true/1/yes/on", () =>
    Effect.gen(function* () {
      const production = Result.getOrThrow(yield* fetchSettings({ RUN_ENV: "production" }))
      assert.isTrue(production.production)
      assert.isFalse(production.allowPrivateNetwork)
      assert.strictEqual(production.maxBodyBytes, 5 * 1024 * 1024)
      for (const value of ["true", "1", "YES", " on "]) {
        const optedIn = Result.getOrThrow(yield* fetchSettings({ RUN_ENV: "production", FETCH_URL_ALLOW_PRIVATE_NETWORK: value }))
        assert.isTrue(optedIn.allowPrivateNetwork, value)
      }
      const no = Result.getOrThrow(yield* fetchSettings({ RUN_ENV: "production", FETCH_URL_ALLOW_PRIVATE_NETWORK: "nope" }))
      assert.isFalse(no.allowPrivateNetwork)
    })
  )

  it.effect("floors and fallbacks: timeout min 1000, length min 1, redirects < 1 ⇒ 3; bad integers name the variable", () =>
    Effect.gen(function* () {
      const settings = Result.getOrThrow(
        yield* fetchSettings({
          FETCH_URL_TIMEOUT_MS: "10",
          FETCH_URL_MAX_CONTENT_LENGTH: "0",
          USER_REMOTE_FETCH_MAX_REDIRECTS: "0",
          MAX_FETCH_SIZE_MB: "7",
          FETCH_URL_ENGINE_ORDER: " Crawl4AI , safe_http ,",
          CRAWL4AI_BASE_URL: " http://127.0.0.1:11235 "
        })
      )
      assert.strictEqual(Duration.toMillis(settings.timeout), 1_000)
      assert.strictEqual(settings.maxContentLength, 1)
      assert.strictEqual(settings.maxRedirects, 3)
      assert.strictEqual(settings.maxBodyBytes, 7 * 1024 * 1024)
      assert.deepStrictEqual(settings.engineOrder, ["crawl4ai", "safe_http"])
      assert.deepStrictEqual(settings.crawl4aiBaseUrl, Option.some("http://127.0.0.1:11235"))
      const bad = yield* fetchSettings({ FETCH_URL_TIMEOUT_MS: "soon" })
      assert.isTrue(Result.isFailure(bad))
      if (Result.isFailure(bad)) assert.include(String(bad.failure), "FETCH_URL_TIMEOUT_MS")
    })
  )

  it.effect("AddressPolicy.layer reads the same RUN_ENV / opt-in", () =>
    Effect.gen(function* () {
      const policyFor = (env: Record<string, string>) =>
        Effect.provide(AddressPolicy, AddressPolicy.layer.pipe(Layer.provide(Layer.merge(DnsResolver.fromTable({}), withEnv(env)))))
      assert.isFalse((yield* policyFor({ RUN_ENV: "production" })).allowPrivateNetwork)
      assert.isTrue((yield* policyFor({ RUN_ENV: "production", FETCH_URL_ALLOW_PRIVATE_NETWORK: "on" })).allowPrivateNetwork)
      assert.isFalse((yield* policyFor({})).allowPrivateNetwork)
      assert.isTrue((yield* policyFor({ RUN_ENV: "development" })).allowPrivateNetwork)
    })
  )

  it.effect("SearchConfig: backends from the environment, the key redacted, trailing slashes dropped", () =>
    Effect.gen(function* () {
      const settings = yield* Effect.provide(
        SearchConfig,
        SearchConfig.layer.pipe(
          Layer.provide(
            withEnv({ SEARXNG_BASE_URL: "http://127.0.0.1:8888/", BRAVE_API_KEY: "k-123", DUCKDUCKGO_BASE_URL: "http://127.0.0.1:9999" })
          )
        )
      )
      assert.deepStrictEqual(settings.searxngBaseUrl, Option.some("http://127.0.0.1:8888"))
      assert.strictEqual(Option.map(settings.braveApiKey, Redacted.value).pipe(Option.getOrNull), "k-123")
      assert.notInclude(String(settings.braveApiKey), "k-123")
      assert.strictEqual(settings.braveApiBaseUrl, "https://api.search.brave.com")
      assert.strictEqual(settings.duckduckgoBaseUrl, "http://127.0.0.1:9999")
      const empty = yield* Effect.provide(SearchConfig, SearchConfig.layer.pipe(Layer.provide(withEnv({ BRAVE_API_KEY: "  " }))))
      assert.isTrue(Option.isNone(empty.braveApiKey))
      assert.isTrue(Option.isNone(empty.searxngBaseUrl))
    })
  )
})
