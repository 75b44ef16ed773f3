import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { postgres } from "./store/databases"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const recorder = pathToFileURL(join(root, "test", "support", "recordImports.mjs")).href

/** The chunk of the bundled PostgreSQL client (`import("@effect/sql-pg/PgClient")` in store/Database.ts). */
const loadsPgClient = (chunks: ReadonlyArray<string>) => chunks.some((chunk) => chunk.startsWith("PgClient-"))

/**
 * Runs `node dist/main.js --once hi --json` (what `npm start` runs) and lists the packages it
 * imported and the dist/ chunks it loaded (a bundled library, such as @effect/sql-pg, is a chunk
 * named after the module imported: `PgClient-<hash>.js`).
 */
const importsOfOnce = (env: Record<string, string>) =>
  Effect.promise(() =>
    new Promise<{ readonly code: number; readonly stderr: string; readonly packages: ReadonlySet<string>; readonly chunks: ReadonlyArray<string> }>((resolve) => {
      const directory = mkdtempSync(join(tmpdir(), "loopcord-imports-"))
      const log = join(directory, "imports.txt")
      execFile(process.execPath, ["--import", recorder, "dist/main.js", "--once", "hi", "--json"], {
        cwd: root,
        timeout: 60_000,
        env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, LLM_PROVIDER: "scripted", LOOPCORD_IMPORT_LOG: log, ...env }
      }, (error, _stdout, stderr) => {
        let lines: Array<string> = []
        try {
          lines = readFileSync(log, "utf8").split("\n").filter((line) => line.length > 0)
        } catch {
          // Nothing imported: the file was never written.
        }
        rmSync(directory, { recursive: true, force: true })
        const chunks = lines.filter((line) => line.startsWith("dist:")).map((line) => line.slice("dist:".length))
        // `@scope/name/sub/path` and `name/sub` → the package.
        const packages = new Set(lines.filter((line) => !line.startsWith("dist:")).map((specifier) =>
          specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")))
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stderr, packages, chunks })
      })
    })
  )

describe("start-up loads only what the configuration uses (dist/main.js)", () => {
  it.live("the terminal front on SQLite: no discord.js, PostgreSQL client, MCP SDK nor linkedom", () =>
    Effect.gen(function*() {
      const run = yield* importsOfOnce({ DATABASE_URL: "sqlite::memory:" })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isTrue(run.packages.has("better-sqlite3"), `the SQLite driver is the one loaded: ${[...run.packages].join(", ")}`)
      for (const unused of ["discord.js", "@modelcontextprotocol/sdk", "linkedom"]) {
        assert.isFalse(run.packages.has(unused), `${unused} was imported: ${[...run.packages].join(", ")}`)
      }
      assert.isTrue(run.chunks.includes("main.js"), `the loaded chunks are recorded: ${run.chunks.join(", ")}`)
      assert.isFalse(loadsPgClient(run.chunks), `the PostgreSQL client was loaded: ${run.chunks.join(", ")}`)
    }), { timeout: 60_000 })

  it.live("MCP_SERVERS configured: the MCP SDK loads (and still no discord.js)", () =>
    Effect.gen(function*() {
      const run = yield* importsOfOnce({
        DATABASE_URL: "sqlite::memory:",
        MCP_SERVERS: JSON.stringify([{ name: "absent", transport: "stdio", command: join(root, "no-such-mcp-server") }])
      })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isTrue(run.packages.has("@modelcontextprotocol/sdk"), [...run.packages].join(", "))
      assert.isFalse(run.packages.has("discord.js"))
    }), { timeout: 60_000 })

  it.live("a PostgreSQL DATABASE_URL loads the PostgreSQL client and never the SQLite driver", () =>
    Effect.gen(function*() {
      const target = yield* postgres.target
      const url = target._tag === "Postgres" ? Redacted.value(target.url) : ""
      const run = yield* importsOfOnce({ DATABASE_URL: url })
      assert.strictEqual(run.code, 0, run.stderr)
      assert.isTrue(loadsPgClient(run.chunks), run.chunks.join(", "))
      assert.isFalse(run.packages.has("better-sqlite3"), [...run.packages].join(", "))
      assert.isFalse(run.packages.has("discord.js"))
    }), { timeout: 60_000 })
})
