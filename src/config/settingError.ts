import { Config, Effect, type Result, Schema, SchemaIssue } from "effect"

/**
 * A ConfigError naming one variable. Its issue points at the variable, so the start-up line
 * reads `NAME: detail`; its own message is that one line too (a SchemaError's would add the
 * path on a line of its own).
 */
class SettingError extends Config.ConfigError {
  readonly setting: string
  readonly detail: string
  constructor(setting: string, detail: string) {
    super(new Schema.SchemaError(new SchemaIssue.Pointer([setting], new SchemaIssue.InvalidValue({ message: detail }))))
    this.setting = setting
    this.detail = detail
  }
  override get message(): string {
    return `${this.setting}: ${this.detail}`
  }
}

/**
 * A ConfigError naming one variable; the start-up line reads `NAME: message`. A wrong value
 * and a required value that is missing take the same form: the line names the variable
 * either way, and a failed check is never taken for "unset" (no default replaces it).
 */
export const invalidSetting = (name: string, message: string): Config.ConfigError => new SettingError(name, message)

/** Parses or checks what a Config read: a failure is the ConfigError `f` returns. */
export const mapOrFail = <A, B>(f: (value: A) => Result.Result<B, Config.ConfigError>) => (self: Config.Config<A>): Config.Config<B> =>
  Config.mapEffect(self, (value) => Effect.fromResult(f(value)))
