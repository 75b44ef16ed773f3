/**
 * The part of better-sqlite3's API that BetterSqliteClient uses. The package ships no types of
 * its own; these follow its documented synchronous API.
 */
declare module "better-sqlite3" {
  namespace Database {
    interface RunResult {
      readonly changes: number
      readonly lastInsertRowid: number | bigint
    }

    interface Statement {
      /** Whether the statement returns rows (a SELECT, or anything with RETURNING). */
      readonly reader: boolean
      /** The rows: objects by column name, or arrays of values in raw mode. */
      all(...params: ReadonlyArray<unknown>): Array<object>
      run(...params: ReadonlyArray<unknown>): RunResult
      /** Rows as arrays of values instead of objects. */
      raw(toggle?: boolean): this
      /** INTEGER columns as bigint instead of number. */
      safeIntegers(toggle?: boolean): this
    }

    interface Options {
      readonly readonly?: boolean
      readonly fileMustExist?: boolean
      /** Milliseconds to wait for a lock held by another connection. */
      readonly timeout?: number
    }
  }

  interface Database {
    readonly open: boolean
    readonly inTransaction: boolean
    readonly memory: boolean
    prepare(sql: string): Database.Statement
    pragma(source: string, options?: { readonly simple?: boolean }): unknown
    close(): this
  }

  const Database: new (filename: string, options?: Database.Options) => Database

  export = Database
}
