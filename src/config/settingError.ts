import { Config, Effect, type Result, Schema, SchemaIssue } from "effect"

/**
 * A ConfigError naming one variable; the start-up line reads `NAME: message`. A wrong value
 * and a required value that is missing take the same form: the line names the variable
 * either way, and a failed check is never taken for "unset" (no default replaces it).
 */
export const invalidSetting = (name: string, message: string): Config.ConfigError =>
  new Config.ConfigError(new Schema.SchemaError(new SchemaIssue.Pointer([name], new SchemaIssue.InvalidValue({ message }))))

/** Parses or checks what a Config read: a failure is the ConfigError `f` returns. */
export const mapOrFail = <A, B>(f: (value: A) => Result.Result<B, Config.ConfigError>) => (self: Config.Config<A>): Config.Config<B> =>
  Config.mapEffect(self, (value) => Effect.fromResult(f(value)))
