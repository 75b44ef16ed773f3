/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` in its own process, one after another (so
 * contenders never share a heap or a core with another benchmark), and writes their Markdown
 * sections to test/bench/RESULTS.md. Pass names to run a subset: `npm run bench -- stream`; a
 * subset replaces only its own sections in RESULTS.md (each section sits between markers and
 * says when it was written), the others stay as they were.
 * The whole run has a time budget (`BENCH_BUDGET_SECONDS`, default 900): a bench still running
 * when it is spent is stopped and reported as FAILED, and later benches are not started.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { composeResults, readSections, resultsHeader, resultsPath, stampSection } from "./support/results"

const here = dirname(fileURLToPath(import.meta.url))
const filters = process.argv.slice(2)
const benches = readdirSync(here)
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort()

const budgetMs = Number(process.env.BENCH_BUDGET_SECONDS ?? 900) * 1000
const startedAt = Date.now()
/** Finished sections by bench file, in run order. */
const sections = new Map<string, string>()
let failed = false
for (const file of benches) {
  const remainingMs = budgetMs - (Date.now() - startedAt)
  if (remainingMs <= 0) {
    failed = true
    sections.set(file, stampSection(file, `## ${file}\n\nFAILED (not started: the ${budgetMs / 1000} s budget was spent)`))
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
  const wallSeconds = (Date.now() - benchStartedAt) / 1000
  if (run.status !== 0) {
    failed = true
    const reason = run.error !== undefined && "code" in run.error && run.error.code === "ETIMEDOUT" ? "stopped: the time budget ran out" : `exit ${run.status ?? run.signal}`
    // A bench whose checks failed may still have printed its section (what failed, and the
    // numbers it measured anyway): keep it, marked, rather than lose it.
    const printed = run.stdout.trim()
    sections.set(
      file,
      stampSection(file, printed.startsWith("## ") ? `${printed}\n\n**FAILED (${reason})**` : `## ${file}\n\nFAILED (${reason})`, wallSeconds)
    )
  } else {
    sections.set(file, stampSection(file, run.stdout, wallSeconds))
  }
}

const header = resultsHeader(`last bench run ${new Date().toISOString()}${filters.length === 0 ? " (all benches)" : ` (only: ${filters.join(", ")})`}`)
const previous = readSections()
let output: string
if (filters.length > 0 && previous.text.length > 0 && previous.sections.size === 0) {
  // An older file without section markers: never overwrite it with a subset.
  const partial = join(here, ".out", "RESULTS.partial.md")
  mkdirSync(dirname(partial), { recursive: true })
  output = composeResults(header, sections)
  writeFileSync(partial, output)
  process.stderr.write(`bench: RESULTS.md has no section markers; this subset went to ${partial} instead\n`)
} else {
  // Fresh sections replace their old ones. A full run drops sections of benches that no longer
  // exist; the soak's section (written by npm run soak) is always kept.
  const kept = [...previous.sections].filter(([name]) => filters.length > 0 || name === "soak.ts")
  output = composeResults(header, new Map([...kept, ...sections]))
  writeFileSync(resultsPath, output)
}
process.stdout.write(output)
process.exit(failed ? 1 : 0)
