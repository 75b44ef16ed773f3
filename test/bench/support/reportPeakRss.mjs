// Preloaded into every process startup.bench.ts starts (NODE_OPTIONS=--import): on exit it
// writes the process's peak resident set (getrusage maxrss, KiB) and the CPU time it used (user
// + system, microseconds) to `$LOOPCORD_BENCH_RSS_DIR/<pid>`, so the bench knows each child's
// figures after it is gone.
import { writeFileSync } from "node:fs"
import { join } from "node:path"

const dir = process.env.LOOPCORD_BENCH_RSS_DIR
if (dir !== undefined && dir !== "") {
  process.on("exit", () => {
    try {
      const usage = process.resourceUsage()
      writeFileSync(join(dir, String(process.pid)), `${usage.maxRSS} ${usage.userCPUTime + usage.systemCPUTime} ${process.argv.slice(1).join(" ")}\n`)
    } catch {
      // The bench is gone: nothing to report to.
    }
  })
}
