import { Data, Result, Redacted } from "effect"

/** Where the data lives, parsed from `DATABASE_URL`. */
export type DatabaseTarget = Data.TaggedEnum<{
  /** A SQLite file; its directory is created on first start. */
  SqliteFile: { readonly path: string }
  SqliteMemory: {}
  /** A PostgreSQL server (several bot processes may share it). The URL may hold a password. */
  Postgres: { readonly url: Redacted.Redacted<string> }
}>

export const DatabaseTarget = Data.taggedEnum<DatabaseTarget>()

export const DEFAULT_DATABASE_URL = "sqlite:./data/loopcord.db"

/**
 * `sqlite:PATH`, `sqlite://PATH` (`sqlite:///abs/path` is absolute), `sqlite::memory:`,
 * `postgres://…` / `postgresql://…`. The error text never repeats the URL (it may carry a password).
 */
export const parseDatabaseUrl = (raw: string): Result.Result<DatabaseTarget, string> => {
  const url = raw.trim()
  const lower = url.toLowerCase()
  if (lower.startsWith("postgres://") || lower.startsWith("postgresql://")) {
    return Result.succeed(DatabaseTarget.Postgres({ url: Redacted.make(url) }))
  }
  if (lower.startsWith("sqlite:")) {
    const rest = url.slice("sqlite:".length)
    if (rest === ":memory:" || rest === "//:memory:") return Result.succeed(DatabaseTarget.SqliteMemory())
    const path = rest.startsWith("//") ? rest.slice(2) : rest
    return path.length === 0
      ? Result.fail("sqlite: needs a file path, e.g. sqlite:./data/loopcord.db or sqlite::memory:")
      : Result.succeed(DatabaseTarget.SqliteFile({ path }))
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]
  return Result.fail(
    `unsupported ${scheme === undefined ? "value" : `scheme "${scheme}:"`}; use sqlite:PATH, sqlite::memory: or postgres://…`
  )
}

/** A description safe for logs (no credentials). */
export const describeTarget = (target: DatabaseTarget): string =>
  DatabaseTarget.$match(target, {
    SqliteFile: ({ path }) => `SQLite file ${path}`,
    SqliteMemory: () => "SQLite in memory",
    Postgres: ({ url }) => {
      try {
        const parsed = new URL(Redacted.value(url))
        return `PostgreSQL ${parsed.hostname}${parsed.port === "" ? "" : `:${parsed.port}`}${parsed.pathname}`
      } catch {
        return "PostgreSQL"
      }
    }
  })
