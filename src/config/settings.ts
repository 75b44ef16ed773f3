import { Config, Duration } from "effect"

/**
 * An integer setting with a default and a floor: unset ⇒ default, below the floor ⇒ the floor
 * (spec §10), not an integer ⇒ a ConfigError naming the variable (design §5.2).
 */
export const intSetting = (name: string, options: { readonly default: number; readonly min: number }): Config.Config<number> =>
  Config.integer(name).pipe(
    Config.withDefault(options.default),
    Config.map((value) => Math.max(value, options.min))
  )

/** A millisecond setting as a Duration, with the same default and floor rules. */
export const millisSetting = (
  name: string,
  options: { readonly default: number; readonly min: number }
): Config.Config<Duration.Duration> => Config.map(intSetting(name, options), Duration.millis)

/** `true/1/yes/on` (trimmed, any case) ⇒ true; unset or anything else ⇒ false (spec §7.2 opt-in parsing). */
export const flagSetting = (name: string): Config.Config<boolean> =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => ["true", "1", "yes", "on"].includes(raw.trim().toLowerCase()))
  )

/** A comma-separated list, trimmed, empty entries dropped. */
export const listSetting = (name: string): Config.Config<ReadonlyArray<string>> =>
  Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0))
  )
