import { Config, ConfigError, Context, Either, Layer } from "effect"
import { DEFAULT_DATABASE_URL, type DatabaseTarget, parseDatabaseUrl } from "../store/DatabaseUrl"

/** `DATABASE_URL` (design §5.2): a bad value fails start-up with one line naming the variable. */
export const databaseTargetConfig: Config.Config<DatabaseTarget> = Config.string("DATABASE_URL").pipe(
  Config.withDefault(DEFAULT_DATABASE_URL),
  Config.mapOrFail((raw) =>
    Either.mapLeft(parseDatabaseUrl(raw), (message) => ConfigError.InvalidData(["DATABASE_URL"], message))
  )
)

export interface StoreSettings {
  readonly database: DatabaseTarget
}

export class StoreConfig extends Context.Tag("loopcord/config/StoreConfig")<StoreConfig, StoreSettings>() {
  static readonly layer = Layer.effect(StoreConfig, Config.all({ database: databaseTargetConfig }))
  static readonly make = (settings: StoreSettings) => Layer.succeed(StoreConfig, settings)
}
