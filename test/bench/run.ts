/**
 * `npm run bench`: runs every `test/bench/*.bench.ts` in its own process, one after another (so
 * contenders never share a heap or a core with another benchmark), and writes their Markdown
 * sections to test/bench/RESULTS.md. Pass names to run a subset: `npm run bench -- stream`.
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

const sections: Array<string> = []
let failed = false
for (const file of benches) {
  process.stderr.write(`bench: ${file}\n`)
  const run = spawnSync(process.execPath, ["--expose-gc", "--import", "tsx", join(here, file)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 * 1024 * 1024
  })
  if (run.status !== 0) {
    failed = true
    sections.push(`## ${file}\n\nFAILED (exit ${run.status ?? run.signal})\n`)
  } else {
    sections.push(run.stdout.trim() + "\n")
  }
}

const header = `# Benchmark results\n\nWritten by \`npm run bench\` on ${new Date().toISOString()} (Node ${process.version}, ${process.platform}/${process.arch}).\n`
writeFileSync(join(here, "RESULTS.md"), [header, ...sections].join("\n"))
process.stdout.write([header, ...sections].join("\n"))
process.exit(failed ? 1 : 0)
