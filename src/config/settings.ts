import { Config, Duration, Result } from "effect"
import { invalidSetting, mapOrFail } from "./settingError"

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
 * An integer variable: what `Number` reads as an integer (surrounding blanks allowed, `1e3`
 * too); anything else is a ConfigError naming the variable. Unset stays unset (a default or
 * `Config.option` decides).
 */
export const integerConfig = (name: string): Config.Config<number> =>
  Config.String(name).pipe(mapOrFail((text) => {
    const value = Number(text)
    return Number.isInteger(value)
      ? Result.succeed(value)
      : Result.fail(invalidSetting(name, `Expected an integer value but received ${JSON.stringify(text)}`))
  }))

const TRUE = ["true", "yes", "on", "1"]
const FALSE = ["false", "no", "off", "0"]

/** A boolean variable: true/yes/on/1 or false/no/off/0 (as written); anything else names the variable. */
export const booleanConfig = (name: string): Config.Config<boolean> =>
  Config.String(name).pipe(mapOrFail((text) => {
    if (TRUE.includes(text)) return Result.succeed(true)
    if (FALSE.includes(text)) return Result.succeed(false)
    return Result.fail(invalidSetting(name, `Expected a boolean value but received ${JSON.stringify(text)}`))
  }))

/**
 * An integer setting with a default and a floor: unset ⇒ default, below the floor ⇒ the floor
 * (docs/architecture.md, Settings), not an integer ⇒ a ConfigError naming the variable.
 */
export const intSetting = (name: string, options: { readonly default: number; readonly min: number }): Config.Config<number> => {
  facts.set(name, { default: String(options.default), min: options.min })
  return integerConfig(name).pipe(
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
  return Config.String(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => ["true", "1", "yes", "on"].includes(raw.trim().toLowerCase()))
  )
}

/** A comma-separated list, trimmed, empty entries dropped. */
export const listSetting = (name: string): Config.Config<ReadonlyArray<string>> => {
  facts.set(name, { default: "" })
  return Config.String(name).pipe(
    Config.withDefault(""),
    Config.map((raw) => raw.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0))
  )
}
