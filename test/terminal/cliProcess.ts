import { execFile } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/**
 * `node dist/main.js …` (what `npm start` runs; the test setup builds dist/) as a real child
 * process with only the variables given (no DISCORD_TOKEN, no keys from the host, an in-memory
 * database).
 */
export const runCli = (args: ReadonlyArray<string>, env: Record<string, string>, cwd = repoRoot): Promise<CliRun> =>
  new Promise((resolve) => {
    execFile(process.execPath, [join(repoRoot, "dist/main.js"), ...args], {
      cwd,
      timeout: 90_000,
      // A --json report may be several MB (long replies and tool results).
      maxBuffer: 64 * 1024 * 1024,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? repoRoot, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env }
    }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : 1
      resolve({ code, stdout, stderr })
    })
  })
