import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Result } from "effect"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { settingsProvider } from "../../src/config/dotenv"
import { describeFailure } from "../../src/config/startupError"

/** The Discord settings under `env` (a token is always set); a failure as its one start-up line. */
const read = (env: Record<string, string>) =>
  Effect.provide(DiscordConfig, DiscordConfig.layer).pipe(
    Effect.provideService(ConfigProvider.ConfigProvider, settingsProvider({ DISCORD_TOKEN: "token", ...env })),
    Effect.mapError((error) => describeFailure(Cause.fail(error))),
    Effect.result
  )

describe("DiscordConfig", () => {
  it.effect("[issue 11] DISCORD_MAX_MESSAGES_PER_TURN: 10 by default, at least 1, a non-integer fails start-up naming it", () =>
    Effect.gen(function*() {
      const byDefault = yield* read({})
      assert.isTrue(Result.isSuccess(byDefault) && byDefault.success.maxMessagesPerTurn === 10)
      const set = yield* read({ DISCORD_MAX_MESSAGES_PER_TURN: "3" })
      assert.isTrue(Result.isSuccess(set) && set.success.maxMessagesPerTurn === 3)
      const floor = yield* read({ DISCORD_MAX_MESSAGES_PER_TURN: "0" })
      assert.isTrue(Result.isSuccess(floor) && floor.success.maxMessagesPerTurn === 1)
      const bad = yield* read({ DISCORD_MAX_MESSAGES_PER_TURN: "many" })
      assert.isTrue(Result.isFailure(bad) && bad.failure.includes("DISCORD_MAX_MESSAGES_PER_TURN") && !bad.failure.includes("\n"), JSON.stringify(bad))
    }))
})
