import { Config, Context, Duration, Result, Layer } from "effect"
import { DEFAULT_DATABASE_URL, type DatabaseTarget, parseDatabaseUrl } from "./DatabaseUrl"
import { millisSetting } from "./settings"
import { invalidSetting, mapOrFail } from "./settingError"

/** `STORE_TIMEOUT_MS` default. */
export const DEFAULT_STORE_TIMEOUT = Duration.millis(10_000)

/** `DATABASE_URL`: a bad value fails start-up with one line naming the variable. */
export const databaseTargetConfig: Config.Config<DatabaseTarget> = Config.String("DATABASE_URL").pipe(
  Config.withDefault(DEFAULT_DATABASE_URL),
  mapOrFail((raw) =>
    Result.mapError(parseDatabaseUrl(raw), (message) => invalidSetting("DATABASE_URL", message))
  )
)

/** `STORE_TIMEOUT_MS` (10000, min 1000): the longest any one store call may take. */
const storeTimeoutConfig: Config.Config<Duration.Duration> = millisSetting("STORE_TIMEOUT_MS", {
  default: Duration.toMillis(DEFAULT_STORE_TIMEOUT),
  min: 1_000
})

interface StoreSettings {
  readonly database: DatabaseTarget
  /** Every store call fails with a `timeout` StoreError after this long. */
  readonly timeout: Duration.Duration
}

export class StoreConfig extends Context.Service<StoreConfig, StoreSettings>()("loopcord/config/StoreConfig") {
  static readonly layer = Layer.effect(StoreConfig, Config.all({ database: databaseTargetConfig, timeout: storeTimeoutConfig }))
  static readonly make = (settings: { readonly database: DatabaseTarget; readonly timeout?: Duration.Duration }) =>
    Layer.succeed(StoreConfig, { timeout: DEFAULT_STORE_TIMEOUT, ...settings })
}
