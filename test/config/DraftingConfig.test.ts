import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Result } from "effect"
import { DraftingConfig, draftingSettings } from "../../src/config/DraftingConfig"
import { describeFailure } from "../../src/config/startupError"
import { settingsProvider } from "../../src/config/dotenv"

const withEnv = (env: Record<string, string>) => Effect.provideService(ConfigProvider.ConfigProvider, settingsProvider(env))

const read = (env: Record<string, string>) =>
  draftingSettings.pipe(withEnv(env), Effect.mapError((error) => describeFailure(Cause.fail(error))), Effect.result)

describe("Response Drafting settings (RESPONSE_DRAFTING, RESPONSE_REVIEW_MODEL)", () => {
  it.effect("off by default; the reviewer defaults to the attempt's model", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* read({}), Result.succeed({ enabled: false, reviewModel: undefined }))
      // The Reference's default, for a loop nobody configured.
      assert.deepStrictEqual(yield* DraftingConfig, { enabled: false, reviewModel: undefined })
    }))

  it.effect("on/off in any case, and a trimmed review model (blank: unset)", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* read({ RESPONSE_DRAFTING: " ON ", RESPONSE_REVIEW_MODEL: " gpt-4o-mini " }), Result.succeed({ enabled: true, reviewModel: "gpt-4o-mini" }))
      assert.deepStrictEqual(yield* read({ RESPONSE_DRAFTING: "off", RESPONSE_REVIEW_MODEL: "  " }), Result.succeed({ enabled: false, reviewModel: undefined }))
      assert.deepStrictEqual(yield* read({ RESPONSE_DRAFTING: "true" }), Result.succeed({ enabled: true, reviewModel: undefined }))
    }))

  it.effect("a bad value fails start-up with one line naming RESPONSE_DRAFTING", () =>
    Effect.gen(function*() {
      const result = yield* read({ RESPONSE_DRAFTING: "sometimes" })
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result)) {
        assert.include(result.failure, "RESPONSE_DRAFTING")
        assert.notInclude(result.failure, "\n")
      }
    }))
})
