import { Config, ConfigError, Either } from "effect"

export type RunEnv = "development" | "production"

/**
 * `RUN_ENV`: `development` (default) or `production` (any case). Anything else fails start-up:
 * a typo must not silently drop the production guards.
 */
export const runEnvSetting: Config.Config<RunEnv> = Config.string("RUN_ENV").pipe(
  Config.withDefault("development"),
  Config.mapOrFail((raw) => {
    const value = raw.trim().toLowerCase()
    return value === "development" || value === "production"
      ? Either.right<RunEnv>(value)
      : Either.left(ConfigError.InvalidData(["RUN_ENV"], `must be development or production (got "${raw}")`))
  })
)
