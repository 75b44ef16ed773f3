import * as FileSystem from "effect/FileSystem"
import { ConfigProvider, Data, Effect, Result, Layer } from "effect"
import { join } from "node:path"

/** A `.env` file that cannot be used; the message is the one start-up line (file and line, never a value). */
class DotenvError extends Data.TaggedError("DotenvError")<{
  readonly path: string
  /** 1-based; 0 when the file as a whole is the problem. */
  readonly line: number
  readonly reason: string
}> {
  override get message(): string {
    return this.line === 0 ? `${this.path}: ${this.reason}` : `${this.path} line ${this.line}: ${this.reason}`
  }
}

/** A `.env` is a handful of settings; anything this big is not one. */
const DOTENV_MAX_BYTES = 1024 * 1024

interface DotenvProblem {
  readonly line: number
  readonly reason: string
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/

/** What may follow a closing quote: nothing, or a comment. */
const onlyComment = (rest: string) => rest.trim() === "" || rest.trimStart().startsWith("#")

const unescapeDouble = (text: string) =>
  text.replace(/\\([nrt"\\$])/g, (_, code: string) => (code === "n" ? "\n" : code === "r" ? "\r" : code === "t" ? "\t" : code))

/**
 * Parses `.env` text: `KEY=VALUE` lines (an `export ` prefix is allowed), `#` comments and blank
 * lines. Values are literal: unquoted (an inline comment needs a space before `#`), `'single'`
 * (as written) or `"double"` (`\n`, `\t`, `\"`, `\\` escapes); quoted values may span lines. No
 * `${VAR}` expansion. A later line wins over an earlier one with the same key.
 */
export const parseDotenv = (text: string): Result.Result<ReadonlyMap<string, string>, DotenvProblem> => {
  const values = new Map<string, string>()
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/)
  for (let index = 0; index < lines.length; index++) {
    const lineNumber = index + 1
    const line = (lines[index] ?? "").trim()
    if (line === "" || line.startsWith("#")) continue
    const body = line.startsWith("export ") ? line.slice("export ".length).trimStart() : line
    const equals = body.indexOf("=")
    if (equals < 0) return Result.fail({ line: lineNumber, reason: "expected KEY=VALUE" })
    const key = body.slice(0, equals).trim()
    if (!NAME.test(key)) return Result.fail({ line: lineNumber, reason: `"${key.slice(0, 40)}" is not a variable name (letters, digits and _)` })
    const raw = body.slice(equals + 1).trimStart()
    const quote = raw[0]
    if (quote !== '"' && quote !== "'") {
      const comment = raw.search(/\s#/)
      values.set(key, (comment < 0 ? raw : raw.slice(0, comment)).trim())
      continue
    }
    // A quoted value ends at the first unescaped matching quote, on this line or a later one.
    let collected = raw.slice(1)
    let closing = findClosing(collected, quote)
    let endLine = index
    while (closing < 0 && endLine + 1 < lines.length) {
      endLine += 1
      collected += `\n${lines[endLine] ?? ""}`
      closing = findClosing(collected, quote)
    }
    if (closing < 0) return Result.fail({ line: lineNumber, reason: `the ${quote === '"' ? "double" : "single"}-quoted value of ${key} is never closed` })
    if (!onlyComment(collected.slice(closing + 1))) {
      return Result.fail({ line: endLine + 1, reason: `unexpected text after the closing quote of ${key}` })
    }
    const inner = collected.slice(0, closing)
    values.set(key, quote === '"' ? unescapeDouble(inner) : inner)
    index = endLine
  }
  return Result.succeed(values)
}

const findClosing = (text: string, quote: string): number => {
  for (let position = 0; position < text.length; position++) {
    const char = text[position]
    if (quote === '"' && char === "\\") {
      position++
      continue
    }
    if (char === quote) return position
  }
  return -1
}

/** `.env` in `directory`, parsed; a missing file is an empty one. */
export const readDotenv = (directory: string): Effect.Effect<ReadonlyMap<string, string>, DotenvError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = join(directory, ".env")
    const fail = (line: number, reason: string) => new DotenvError({ path, line, reason })
    if (!(yield* fs.exists(path).pipe(Effect.orElseSucceed(() => false)))) return new Map()
    const info = yield* fs.stat(path).pipe(Effect.mapError((error) => fail(0, `cannot be read: ${error.message}`)))
    if (info.type !== "File") return yield* fail(0, "is not a file")
    if (Number(info.size) > DOTENV_MAX_BYTES) return yield* fail(0, `is larger than ${DOTENV_MAX_BYTES} bytes`)
    const text = yield* fs.readFileString(path).pipe(Effect.mapError((error) => fail(0, `cannot be read: ${error.message}`)))
    return yield* Result.match(parseDotenv(text), {
      onFailure: (problem) => Effect.fail(fail(problem.line, problem.reason)),
      onSuccess: Effect.succeed
    })
  })

/**
 * The variables in `env` as settings read them: a variable set to the empty string is set (to
 * ""), not unset, so `X=` is read as written rather than as its default.
 */
export const settingsProvider = (env: Readonly<Record<string, string>>): ConfigProvider.ConfigProvider =>
  ConfigProvider.fromEnv({ env: { ...env }, preserveEmptyStrings: true })

/** The environment, then `.env`'s values for what the environment lacks (the real environment wins). */
export const withDotenv = (values: ReadonlyMap<string, string>): ConfigProvider.ConfigProvider => {
  const environment = ConfigProvider.fromEnv({ preserveEmptyStrings: true })
  return values.size === 0 ? environment : environment.pipe(ConfigProvider.orElse(settingsProvider(Object.fromEntries(values))))
}

/** Every Config read under this layer sees `.env` in `directory` (default: the working directory). */
export const dotenvLayer = (directory: string = process.cwd()): Layer.Layer<never, DotenvError, FileSystem.FileSystem> =>
  Layer.unwrap(Effect.map(readDotenv(directory), (values) => ConfigProvider.layer(withDotenv(values))))
