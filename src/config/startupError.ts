import { Cause, ConfigError, Data, Option } from "effect"

/** Start-up cannot go on (a usage error, a front that is not available); the message is one line. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

const leaves = (error: ConfigError.ConfigError): ReadonlyArray<string> => {
  switch (error._op) {
    case "And":
    case "Or":
      return [...leaves(error.left), ...leaves(error.right)]
    case "MissingData":
    case "InvalidData":
    case "SourceUnavailable":
    case "Unsupported": {
      const name = error.path.join("_")
      const message = oneLine(error.message)
      return [name.length === 0 || message.includes(name) ? message : `${name}: ${message}`]
    }
  }
}

/** A ConfigError as one line naming each offending variable (docs/architecture.md, Settings). */
export const describeConfigError = (error: ConfigError.ConfigError): string =>
  `invalid configuration: ${[...new Set(leaves(error))].join("; ")}`

/**
 * Why start-up (or the program) failed, as exactly one line and never a stack trace: the
 * ConfigError naming its variable when there is one, else the first error's message.
 */
export const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (ConfigError.isConfigError(error)) return describeConfigError(error)
    if (error instanceof Error) return oneLine(error.message)
    return oneLine(String(error))
  }
  const defect = Cause.dieOption(cause)
  if (Option.isSome(defect)) {
    return oneLine(defect.value instanceof Error ? `internal error: ${defect.value.message}` : `internal error: ${String(defect.value)}`)
  }
  return "interrupted"
}
