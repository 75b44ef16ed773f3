import { Cause, Config, Data, Option, Result, SchemaIssue } from "effect"

/** Start-up cannot go on (a usage error, a front that is not available); the message is one line. */
export class StartupError extends Data.TaggedError("StartupError")<{ readonly detail: string }> {
  override get message(): string {
    return this.detail
  }
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim()

/** What a leaf of a variable that is not there formats as (replaced by a sentence naming it). */
const MISSING = "\u0000missing"

/**
 * Every problem of a ConfigError with the path it is at. An environment variable is a string,
 * so a leaf that found the wrong type found nothing: the variable is unset.
 */
const formatIssues = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => (issue._tag === "InvalidType" || issue._tag === "MissingKey" ? MISSING : SchemaIssue.defaultLeafHook(issue))
})

const leaves = (error: Config.ConfigError): ReadonlyArray<string> => {
  if (error.cause._tag === "SourceError") return [oneLine(error.cause.message)]
  return formatIssues(error.cause.issue).issues.map(({ message, path }) => {
    const name = (path ?? []).map(String).join("_")
    if (message === MISSING) return name.length === 0 ? "a required setting is not set" : `Expected ${name} to exist in the process context`
    const text = oneLine(message)
    return name.length === 0 || text.includes(name) ? text : `${name}: ${text}`
  })
}

/** A ConfigError as one line naming each offending variable (docs/architecture.md, Settings). */
export const describeConfigError = (error: Config.ConfigError): string =>
  `invalid configuration: ${[...new Set(leaves(error))].join("; ")}`

/**
 * Why start-up (or the program) failed, as exactly one line and never a stack trace: the
 * ConfigError naming its variable when there is one, else the first error's message.
 */
export const describeFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof Config.ConfigError) return describeConfigError(error)
    if (error instanceof Error) return oneLine(error.message)
    return oneLine(String(error))
  }
  const defect = Cause.findDefect(cause)
  if (Result.isSuccess(defect)) {
    return oneLine(defect.success instanceof Error ? `internal error: ${defect.success.message}` : `internal error: ${String(defect.success)}`)
  }
  return "interrupted"
}
