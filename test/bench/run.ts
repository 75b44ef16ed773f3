/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` in its own process, one after another (so
 * contenders never share a heap or a core with another benchmark), and writes their Markdown
 * sections to test/bench/RESULTS.md. Pass names to run a subset: `npm run bench -- stream`.
 * The whole run has a time budget (`BENCH_BUDGET_SECONDS`, default 570): a bench still running
 * when it is spent is stopped and reported as FAILED, and later benches are not started.
 */
import { spawnSync } from "node:child_process"
import { readdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const benches = readdirSync(here)
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort()

const budgetMs = Number(process.env.BENCH_BUDGET_SECONDS ?? 570) * 1000
const startedAt = Date.now()
const sections: Array<string> = []
const durations: Array<string> = []
let failed = false
for (const file of benches) {
  const remainingMs = budgetMs - (Date.now() - startedAt)
  if (remainingMs <= 0) {
    failed = true
    sections.push(`## ${file}\n\nFAILED (not started: the ${budgetMs / 1000} s budget was spent)\n`)
    continue
  }
  process.stderr.write(`bench: ${file}\n`)
  const benchStartedAt = Date.now()
  const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", join(here, file)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
    timeout: remainingMs
  })
  durations.push(`${file} ${((Date.now() - benchStartedAt) / 1000).toFixed(0)} s`)
  if (run.status !== 0) {
    failed = true
    const reason = run.error !== undefined && "code" in run.error && run.error.code === "ETIMEDOUT" ? "stopped: the time budget ran out" : `exit ${run.status ?? run.signal}`
    sections.push(`## ${file}\n\nFAILED (${reason})\n`)
  } else {
    sections.push(run.stdout.trim() + "\n")
  }
}

const header = `# Benchmark results\n\nWritten by \`npm run bench\` on ${new Date().toISOString()} (Node ${process.version}, ${process.platform}/${process.arch}).\n` +
  (durations.length === 0 ? "" : `\nWall time per bench: ${durations.join(", ")}.\n`)
writeFileSync(join(here, "RESULTS.md"), [header, ...sections].join("\n"))
process.stdout.write([header, ...sections].join("\n"))
process.exit(failed ? 1 : 0)
