import { assert, describe, it } from "@effect/vitest"
import { Cause, Config, ConfigProvider, Duration, Effect, Layer, Redacted, Result, Schema, SchemaAST, SchemaIssue } from "effect"
import { LoopConfig } from "../../src/config/LoopConfig"
import { loggingSettings } from "../../src/config/LoggingConfig"
import { DEFAULT_PERSONA_NAME, personaSetting } from "../../src/config/PersonaConfig"
import { ProviderConfig, providerSettings } from "../../src/config/ProviderConfig"
import { routePlanLayer } from "../../src/loop/RoutePlan"
import { runEnvSetting } from "../../src/config/RunEnv"
import { describeConfigError, describeFailure } from "../../src/config/startupError"
import { RoutePlan } from "../../src/loop/RoutePlan"
import { settingsProvider } from "../../src/config/dotenv"

const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, settingsProvider(env))

/** Reads `config` under `env`; a failure comes back as the one-line start-up message. */
const read = <A>(config: Effect.Effect<A, unknown>, env: Record<string, string>) =>
  config.pipe(
    withEnv(env),
    Effect.mapError((error) => describeFailure(Cause.fail(error))),
    Effect.result
  )

const oneLineNaming = (result: Result.Result<unknown, string>, variable: string) => {
  assert.isTrue(Result.isFailure(result), `expected ${variable} to fail start-up`)
  if (Result.isFailure(result)) {
    assert.notInclude(result.failure, "\n")
    assert.include(result.failure, variable)
    assert.notInclude(result.failure, "    at ", "no stack trace")
  }
}

describe("provider configuration (design §5.2)", () => {
  it.effect("defaults: openai-compatible, native tool calling, no keys; models are required for real providers", () =>
    Effect.gen(function*() {
      oneLineNaming(yield* read(providerSettings, {}), "LLM_MODELS")
      const settings = yield* Effect.orDie(providerSettings.pipe(withEnv({ LLM_MODELS: "gpt-4o-mini" })))
      assert.deepStrictEqual(
        { ...settings, apiKeys: settings.apiKeys.length },
        { provider: "openai-compatible", baseUrl: undefined, apiKeys: 0, models: ["gpt-4o-mini"], toolCalling: "native" }
      )
    }))

  it.effect("lists: LLM_MODELS is primary then fallbacks, LLM_API_KEYS the rotation pool (trimmed, redacted)", () =>
    Effect.gen(function*() {
      const settings = yield* Effect.orDie(providerSettings.pipe(withEnv({
        LLM_PROVIDER: "Anthropic",
        LLM_MODELS: " claude-a , claude-b,,",
        LLM_API_KEYS: "sk-1, sk-2 ,sk-3",
        LLM_BASE_URL: "http://127.0.0.1:8080",
        LLM_TOOL_CALLING: "verbatim"
      })))
      assert.strictEqual(settings.provider, "anthropic")
      assert.deepStrictEqual(settings.models, ["claude-a", "claude-b"])
      assert.deepStrictEqual(settings.apiKeys.map(Redacted.value), ["sk-1", "sk-2", "sk-3"])
      assert.notInclude(String(settings.apiKeys[0]), "sk-1", "keys never print")
      assert.strictEqual(settings.baseUrl, "http://127.0.0.1:8080")
      assert.strictEqual(settings.toolCalling, "verbatim")
    }))

  it.effect("the scripted provider needs no model", () =>
    Effect.gen(function*() {
      const settings = yield* Effect.orDie(providerSettings.pipe(withEnv({ LLM_PROVIDER: "scripted" })))
      assert.deepStrictEqual(settings.models, ["scripted"])
    }))

  it.effect("bad values fail with one line naming the variable", () =>
    Effect.gen(function*() {
      oneLineNaming(yield* read(providerSettings, { LLM_PROVIDER: "openai", LLM_MODELS: "m" }), "LLM_PROVIDER")
      oneLineNaming(yield* read(providerSettings, { LLM_BASE_URL: "localhost:11434", LLM_MODELS: "m" }), "LLM_BASE_URL")
      oneLineNaming(yield* read(providerSettings, { LLM_TOOL_CALLING: "json", LLM_MODELS: "m" }), "LLM_TOOL_CALLING")
      oneLineNaming(yield* read(runEnvSetting, { RUN_ENV: "prod" }), "RUN_ENV")
      oneLineNaming(yield* read(loggingSettings, { LOG_LEVEL: "loud" }), "LOG_LEVEL")
      oneLineNaming(yield* read(loggingSettings, { LOG_FORMAT: "xml" }), "LOG_FORMAT")
    }))

  it.effect("the route plan comes from the provider settings", () =>
    Effect.gen(function*() {
      const plan = yield* RoutePlan
      assert.deepStrictEqual(plan.models, ["a", "b"])
      assert.strictEqual(plan.keys.length, 2)
    }).pipe(
      Effect.provide(routePlanLayer.pipe(Layer.provide(ProviderConfig.layer))),
      withEnv({ LLM_MODELS: "a,b", LLM_API_KEYS: "k1,k2" })
    ))
})

describe("loop limits from the environment (spec §10, design §5.2)", () => {
  const loop = Effect.provide(LoopConfig, LoopConfig.layer)

  it.effect("[20] below the minimum is raised to it (500 ⇒ 10000)", () =>
    Effect.gen(function*() {
      const settings = yield* Effect.orDie(loop.pipe(withEnv({ TOOL_EXECUTION_TIMEOUT_MS: "500" })))
      assert.strictEqual(Duration.toMillis(settings.toolExecutionTimeout), 10_000)
    }))

  it.effect("[20] design §5.2 overrides \"abc ⇒ default\": a non-integer fails start-up naming the variable", () =>
    Effect.gen(function*() {
      oneLineNaming(yield* read(loop, { TOOL_EXECUTION_TIMEOUT_MS: "abc" }), "TOOL_EXECUTION_TIMEOUT_MS")
      oneLineNaming(yield* read(loop, { BOT_MAX_FUNCTION_CALL_ITERATIONS: "lots" }), "BOT_MAX_FUNCTION_CALL_ITERATIONS")
    }))

  it.effect("[decision 5] loop guards: defaults 100 / 5, env overrides, minimum 1", () =>
    Effect.gen(function*() {
      const defaults = yield* Effect.orDie(loop.pipe(withEnv({})))
      assert.deepStrictEqual([defaults.maxIterations, defaults.maxConsecutiveToolErrors], [100, 5])
      const set = yield* Effect.orDie(loop.pipe(withEnv({ BOT_MAX_FUNCTION_CALL_ITERATIONS: "0", BOT_MAX_CONSECUTIVE_TOOL_ERRORS: "3" })))
      assert.deepStrictEqual([set.maxIterations, set.maxConsecutiveToolErrors], [1, 3])
    }))

  it.effect("the calls of one pass: MAX_TOOL_CALLS_PER_PASS 16 and TOOL_CALL_CONCURRENCY 4 by default, env overrides, minimum 1, junk fails naming the variable", () =>
    Effect.gen(function*() {
      const defaults = yield* Effect.orDie(loop.pipe(withEnv({})))
      assert.deepStrictEqual([defaults.maxToolCallsPerPass, defaults.toolCallConcurrency], [16, 4])
      const set = yield* Effect.orDie(loop.pipe(withEnv({ MAX_TOOL_CALLS_PER_PASS: "8", TOOL_CALL_CONCURRENCY: "2" })))
      assert.deepStrictEqual([set.maxToolCallsPerPass, set.toolCallConcurrency], [8, 2])
      const floor = yield* Effect.orDie(loop.pipe(withEnv({ MAX_TOOL_CALLS_PER_PASS: "0", TOOL_CALL_CONCURRENCY: "-3" })))
      assert.deepStrictEqual([floor.maxToolCallsPerPass, floor.toolCallConcurrency], [1, 1])
      oneLineNaming(yield* read(loop, { MAX_TOOL_CALLS_PER_PASS: "many" }), "MAX_TOOL_CALLS_PER_PASS")
      oneLineNaming(yield* read(loop, { TOOL_CALL_CONCURRENCY: "2.5" }), "TOOL_CALL_CONCURRENCY")
    }))

  it.effect("[58] first-token budget: max(inactivity, 300 s) unless set", () =>
    Effect.gen(function*() {
      const a = yield* Effect.orDie(loop.pipe(withEnv({ STREAM_SDK_CALL_TIMEOUT_MS: "400000" })))
      assert.strictEqual(Duration.toMillis(a.firstTokenTimeout), 400_000)
      const b = yield* Effect.orDie(loop.pipe(withEnv({})))
      assert.strictEqual(Duration.toMillis(b.firstTokenTimeout), 300_000)
    }))
})

describe("persona, run environment, logging", () => {
  it.effect("persona defaults and overrides", () =>
    Effect.gen(function*() {
      const fallback = yield* Effect.orDie(personaSetting.pipe(withEnv({})))
      assert.strictEqual(fallback.name, DEFAULT_PERSONA_NAME)
      const custom = yield* Effect.orDie(personaSetting.pipe(withEnv({ BOT_PERSONA_NAME: " Nerine ", BOT_SYSTEM_PROMPT: "Be brief." })))
      assert.deepStrictEqual([custom.name, custom.systemPrompt], ["Nerine", "Be brief."])
    }))

  it.effect("RUN_ENV and logging defaults", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* Effect.orDie(runEnvSetting.pipe(withEnv({}))), "production")
      assert.strictEqual(yield* Effect.orDie(runEnvSetting.pipe(withEnv({ RUN_ENV: " Production " }))), "production")
      const logging = yield* Effect.orDie(loggingSettings.pipe(withEnv({ LOG_LEVEL: "WARN", LOG_FORMAT: "json" })))
      assert.deepStrictEqual([logging.level, logging.format], ["Warn", "json"])
    }))

  it("a compound ConfigError lists each variable once, on one line", () => {
    const problem = (name: string, message: string) => new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message }))
    const error = new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Composite(SchemaAST.unknown, [
      problem("A", "bad\nvalue"),
      new SchemaIssue.Composite(SchemaAST.unknown, [problem("B", "missing"), problem("B", "missing")])
    ])))
    assert.strictEqual(describeConfigError(error), "invalid configuration: A: bad value; B: missing")
  })
})
