/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` in its own process, one after another (so
 * contenders never share a heap or a core with another benchmark), and writes their Markdown
 * sections to test/bench/RESULTS.md. Pass names to run a subset: `npm run bench -- stream`; a
 * subset replaces only its own sections in RESULTS.md (each section sits between markers and
 * says when it was written), the others stay as they were.
 * The whole run has a time budget (`BENCH_BUDGET_SECONDS`, default 570): a bench still running
 * when it is spent is stopped and reported as FAILED, and later benches are not started.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
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
const resultsPath = join(here, "RESULTS.md")
/** Finished sections by bench file, in run order. */
const sections = new Map<string, string>()
let failed = false
const stamp = (file: string, body: string, wallSeconds: number | undefined) =>
  `${begin(file)}\n${body.trim()}\n\n_${file}: written ${new Date().toISOString()}` +
  `${wallSeconds === undefined ? "" : `, wall time ${wallSeconds.toFixed(0)} s`}._\n${end(file)}\n`
const begin = (file: string) => `<!-- bench: ${file} -->`
const end = (file: string) => `<!-- /bench: ${file} -->`
for (const file of benches) {
  const remainingMs = budgetMs - (Date.now() - startedAt)
  if (remainingMs <= 0) {
    failed = true
    sections.set(file, stamp(file, `## ${file}\n\nFAILED (not started: the ${budgetMs / 1000} s budget was spent)`, undefined))
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
    sections.set(file, stamp(file, `## ${file}\n\nFAILED (${reason})`, wallSeconds))
  } else {
    sections.set(file, stamp(file, run.stdout, wallSeconds))
  }
}

/** The sections of an earlier RESULTS.md, by bench file (empty when it has no markers). */
const previousSections = (text: string): Map<string, string> => {
  const found = new Map<string, string>()
  for (const match of text.matchAll(/<!-- bench: (\S+) -->[\s\S]*?<!-- \/bench: \1 -->\n?/g)) {
    found.set(match[1]!, match[0].endsWith("\n") ? match[0] : `${match[0]}\n`)
  }
  return found
}

const header = "# Benchmark results\n\n" +
  `Written by \`npm run bench\` (Node ${process.version}, ${process.platform}/${process.arch}); last run ${new Date().toISOString()}` +
  `${filters.length === 0 ? " (all benches)" : ` (only: ${filters.join(", ")})`}. \`npm run bench -- <name>\` rewrites only ` +
  "the sections of the benches it runs; each section ends with the time it was written.\n"
const previous = existsSync(resultsPath) ? readFileSync(resultsPath, "utf8") : ""
const kept = previousSections(previous)
let output: string
if (filters.length > 0 && previous.length > 0 && kept.size === 0) {
  // An older file without section markers: never overwrite it with a subset.
  const partial = join(here, ".out", "RESULTS.partial.md")
  mkdirSync(dirname(partial), { recursive: true })
  output = [header, ...sections.values()].join("\n")
  writeFileSync(partial, output)
  process.stderr.write(`bench: RESULTS.md has no section markers; this subset went to ${partial} instead\n`)
} else {
  // Every bench file in name order: the fresh section if it ran, else the one already there.
  const files = [...new Set([...readdirSync(here).filter((file) => file.endsWith(".bench.ts")), ...kept.keys()])].sort()
  const body = files.flatMap((file) => {
    const section = sections.get(file) ?? (filters.length === 0 ? undefined : kept.get(file))
    return section === undefined ? [] : [section]
  })
  output = [header, ...body].join("\n")
  writeFileSync(resultsPath, output)
}
process.stdout.write(output)
process.exit(failed ? 1 : 0)
