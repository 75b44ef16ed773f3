import { Config, Duration } from "effect"

/**
 * What a helper below knows about its variable: the default and the floor, as `--help` shows
 * them (`catalog.ts` reads this, so a default is written once, where the setting is defined).
 */
interface SettingFacts {
  readonly default: string
  readonly min?: number
}

const facts = new Map<string, SettingFacts>()

/** The facts the helpers below recorded, by variable name (definition-time metadata, never runtime state). */
export const recordedSettingFacts = (): ReadonlyMap<string, SettingFacts> => facts

/**
 * An integer setting with a default and a floor: unset ⇒ default, below the floor ⇒ the floor
 * (docs/architecture.md, Settings), not an integer ⇒ a ConfigError naming the variable.
 */
export const intSetting = (name: string, options: { readonly default: number; readonly min: number }): Config.Config<number> => {
  facts.set(name, { default: String(options.default), min: options.min })
  return Config.integer(name).pipe(
    Config.withDefault(options.default),
    Config.map((value) => Math.max(value, options.min))
  )
}

/** A millisecond setting as a Duration, with the same default and floor rules. */
export const millisSetting = (
  name: string,
  options: { readonly default: number; readonly min: number }
): Config.Config<Duration.Duration> => Config.map(intSetting(name, options), Duration.millis)

/** `true/1/yes/on` (trimmed, any case) ⇒ true; unset or anything else ⇒ false (how every opt-in flag reads). */
export const flagSetting = (name: string): Config.Config<boolean> => {
  facts.set(name, { default: "false" })
  return Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => ["true", "1", "yes", "on"].includes(raw.trim().toLowerCase()))
  )
}

/** A comma-separated list, trimmed, empty entries dropped. */
export const listSetting = (name: string): Config.Config<ReadonlyArray<string>> => {
  facts.set(name, { default: "" })
  return Config.string(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0))
  )
}
