import { Config, Result } from "effect"
import { invalidSetting, mapOrFail } from "./settingError"

type RunEnv = "development" | "production"

/**
 * `RUN_ENV`: `production` (the default: secure unless told otherwise) or `development` (any case). Anything
 * else fails start-up: a typo must not silently drop the production guards. The development
 * relaxations apply only when `RUN_ENV=development` is set explicitly.
 */
export const runEnvSetting: Config.Config<RunEnv> = Config.String("RUN_ENV").pipe(
  Config.withDefault("production"),
  mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    return value === "development" || value === "production"
      ? Result.succeed<RunEnv>(value)
      : Result.fail(invalidSetting("RUN_ENV", `must be development or production (got "${raw}")`))
  })
)

/** `RUN_ENV` is `production` (the default). */
export const productionSetting: Config.Config<boolean> = Config.map(runEnvSetting, (env) => env === "production")
