import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Duration, Effect, Result, Option, Redacted } from "effect"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { loggingSettings } from "../../src/config/LoggingConfig"
import { opsSettings, parseOtlpHeaders } from "../../src/config/OpsConfig"
import { providerSettings } from "../../src/config/ProviderConfig"
import { parseShardIds, shardAssignmentSetting } from "../../src/config/ShardConfig"
import { describeFailure } from "../../src/config/startupError"
import { httpProviderSettings } from "../../src/provider/providerConfig"
import { settingsProvider } from "../../src/config/dotenv"

const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, settingsProvider(env))

const failureLine = <A>(config: Effect.Effect<A, unknown>, env: Record<string, string>) =>
  config.pipe(withEnv(env), Effect.flip, Effect.map((error) => describeFailure(Cause.fail(error))))

const keys = (settings: { readonly apiKeys: ReadonlyArray<Redacted.Redacted<string>> }) => settings.apiKeys.map(Redacted.value)

describe("vendor variables when LLM_API_KEYS / LLM_BASE_URL are unset", () => {
  it.effect("each provider takes its own vendor's key and base URL", () =>
    Effect.gen(function*() {
      const vendorEnv = {
        LLM_MODELS: "m",
        OPENAI_API_KEY: "sk-openai",
        OPENAI_BASE_URL: "http://127.0.0.1:1/v1",
        ANTHROPIC_API_KEY: "sk-ant",
        ANTHROPIC_BASE_URL: "http://127.0.0.1:2",
        GEMINI_API_KEY: "gem"
      }
      const openai = yield* Effect.orDie(providerSettings.pipe(withEnv(vendorEnv)))
      assert.deepStrictEqual([keys(openai), openai.baseUrl], [["sk-openai"], "http://127.0.0.1:1/v1"])
      const anthropic = yield* Effect.orDie(providerSettings.pipe(withEnv({ ...vendorEnv, LLM_PROVIDER: "anthropic" })))
      assert.deepStrictEqual([keys(anthropic), anthropic.baseUrl], [["sk-ant"], "http://127.0.0.1:2"])
      const google = yield* Effect.orDie(providerSettings.pipe(withEnv({ ...vendorEnv, LLM_PROVIDER: "google" })))
      assert.deepStrictEqual([keys(google), google.baseUrl], [["gem"], undefined])
      const scripted = yield* Effect.orDie(providerSettings.pipe(withEnv({ ...vendorEnv, LLM_PROVIDER: "scripted" })))
      assert.deepStrictEqual(keys(scripted), [])
    }))

  it.effect("LLM_API_KEYS and LLM_BASE_URL win; blank counts as unset", () =>
    Effect.gen(function*() {
      const both = yield* Effect.orDie(providerSettings.pipe(withEnv({
        LLM_MODELS: "m",
        LLM_API_KEYS: "a, b",
        LLM_BASE_URL: "http://127.0.0.1:3/v1",
        OPENAI_API_KEY: "sk-openai",
        OPENAI_BASE_URL: "http://127.0.0.1:1/v1"
      })))
      assert.deepStrictEqual([keys(both), both.baseUrl], [["a", "b"], "http://127.0.0.1:3/v1"])
      const blank = yield* Effect.orDie(providerSettings.pipe(withEnv({ LLM_MODELS: "m", LLM_API_KEYS: " ", LLM_BASE_URL: "", OPENAI_API_KEY: "sk-openai" })))
      assert.deepStrictEqual([keys(blank), blank.baseUrl], [["sk-openai"], undefined])
    }))

  it.effect("a bad vendor URL fails naming that variable; another vendor's bad URL is not read", () =>
    Effect.gen(function*() {
      const line = yield* failureLine(providerSettings, { LLM_MODELS: "m", OPENAI_BASE_URL: "localhost:11434" })
      assert.include(line, "OPENAI_BASE_URL")
      assert.notInclude(line, "LLM_BASE_URL")
      const other = yield* Effect.orDie(providerSettings.pipe(withEnv({ LLM_MODELS: "m", LLM_PROVIDER: "google", OPENAI_BASE_URL: "nope" })))
      assert.isUndefined(other.baseUrl)
    }))
})

describe("each variable parsed in one place", () => {
  it.effect("LLM_TOOL_CALLING=Native and LLM_BASE_URL: the providers read the same parsed values", () =>
    Effect.gen(function*() {
      const env = { LLM_MODELS: "m", LLM_TOOL_CALLING: " Verbatim ", OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }
      const app = yield* Effect.orDie(providerSettings.pipe(withEnv(env)))
      const http = yield* Effect.orDie(httpProviderSettings.pipe(withEnv(env)))
      assert.deepStrictEqual([app.toolCalling, app.baseUrl], ["verbatim", "http://127.0.0.1:9/v1"])
      assert.deepStrictEqual([http.toolCalling, http.baseUrl], [app.toolCalling, app.baseUrl])
      const native = yield* Effect.orDie(httpProviderSettings.pipe(withEnv({ LLM_TOOL_CALLING: "Native" })))
      assert.strictEqual(native.toolCalling, "native")
      assert.include(yield* failureLine(httpProviderSettings, { LLM_TOOL_CALLING: "sometimes" }), "LLM_TOOL_CALLING")
    }))
})

describe("LOG_FORMAT follows RUN_ENV", () => {
  it.effect("json in production (the default), pretty in development, as set when set", () =>
    Effect.gen(function*() {
      const format = (env: Record<string, string>) => Effect.map(Effect.orDie(loggingSettings.pipe(withEnv(env))), (settings) => settings.format)
      assert.strictEqual(yield* format({}), "json")
      assert.strictEqual(yield* format({ RUN_ENV: "development" }), "pretty")
      assert.strictEqual(yield* format({ LOG_FORMAT: "pretty" }), "pretty")
      assert.strictEqual(yield* format({ RUN_ENV: "development", LOG_FORMAT: "JSON" }), "json")
      assert.include(yield* failureLine(loggingSettings, { LOG_FORMAT: "xml" }), "LOG_FORMAT")
    }))
})

describe("DISCORD_SHARD_IDS / DISCORD_SHARD_COUNT", () => {
  it("ids and ranges, sorted and unique, each below the count", () => {
    assert.deepStrictEqual(parseShardIds("0-3", 4), Result.succeed([0, 1, 2, 3]))
    assert.deepStrictEqual(parseShardIds("2, 0", 4), Result.succeed([0, 2]))
    assert.deepStrictEqual(parseShardIds("0-1,1,3", 4), Result.succeed([0, 1, 3]))
    assert.isTrue(Result.isFailure(parseShardIds("4", 4)))
    assert.isTrue(Result.isFailure(parseShardIds("3-1", 4)))
    assert.isTrue(Result.isFailure(parseShardIds("a", 4)))
    assert.isTrue(Result.isFailure(parseShardIds("", 4)))
  })

  it.effect("the setting: none, all of a count, a list; bad combinations name the variable", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) => Effect.orDie(shardAssignmentSetting.pipe(withEnv(env)))
      assert.isTrue(Option.isNone(yield* read({})))
      assert.deepStrictEqual(yield* read({ DISCORD_SHARD_COUNT: "2" }), Option.some({ ids: [0, 1], count: 2 }))
      assert.deepStrictEqual(yield* read({ DISCORD_SHARD_COUNT: "4", DISCORD_SHARD_IDS: "1,3" }), Option.some({ ids: [1, 3], count: 4 }))
      assert.include(yield* failureLine(shardAssignmentSetting, { DISCORD_SHARD_IDS: "0" }), "DISCORD_SHARD_COUNT")
      assert.include(yield* failureLine(shardAssignmentSetting, { DISCORD_SHARD_COUNT: "2", DISCORD_SHARD_IDS: "0-5" }), "DISCORD_SHARD_IDS")
      assert.include(yield* failureLine(shardAssignmentSetting, { DISCORD_SHARD_COUNT: "0" }), "DISCORD_SHARD_COUNT")
      const discord = yield* Effect.orDie(Effect.provide(DiscordConfig, DiscordConfig.layer).pipe(withEnv({ DISCORD_TOKEN: "t", DISCORD_SHARD_COUNT: "3", DISCORD_SHARD_IDS: "2" })))
      assert.deepStrictEqual(discord.shards, { ids: [2], count: 3 })
    }))
})

describe("operations settings", () => {
  it.effect("defaults: no telemetry, no health server, a 15 s grace", () =>
    Effect.gen(function*() {
      const settings = yield* Effect.orDie(opsSettings.pipe(withEnv({})))
      assert.isTrue(Option.isNone(settings.otlp))
      assert.isTrue(Option.isNone(settings.healthPort))
      assert.strictEqual(Duration.toMillis(settings.shutdownGrace), 15_000)
    }))

  it.effect("an endpoint with headers and a service name; bad values name their variable without echoing secrets", () =>
    Effect.gen(function*() {
      const settings = yield* Effect.orDie(opsSettings.pipe(withEnv({
        OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318/",
        OTEL_EXPORTER_OTLP_HEADERS: "Authorization=Basic%20abc, x-tenant = t1",
        OTEL_SERVICE_NAME: "bot-eu",
        HEALTH_PORT: "8080",
        SHUTDOWN_GRACE_MS: "2000"
      })))
      const otlp = Option.getOrThrow(settings.otlp)
      assert.deepStrictEqual([otlp.endpoint, otlp.serviceName], ["http://127.0.0.1:4318", "bot-eu"])
      assert.deepStrictEqual(Redacted.value(otlp.headers), { authorization: "Basic abc", "x-tenant": "t1" })
      assert.deepStrictEqual(settings.healthPort, Option.some(8080))
      assert.strictEqual(Duration.toMillis(settings.shutdownGrace), 2000)
      assert.include(yield* failureLine(opsSettings, { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }), "OTEL_EXPORTER_OTLP_ENDPOINT")
      assert.include(yield* failureLine(opsSettings, { HEALTH_PORT: "70000" }), "HEALTH_PORT")
      const headers = yield* failureLine(opsSettings, { OTEL_EXPORTER_OTLP_HEADERS: "secret-token-without-equals" })
      assert.include(headers, "OTEL_EXPORTER_OTLP_HEADERS")
      assert.notInclude(headers, "secret-token")
      assert.isTrue(Result.isFailure(parseOtlpHeaders("a=%zz")))
    }))
})
