/**
 * vitest globalSetup: the tests that start the app as a user does (`node dist/main.js`,
 * `node dist/sharded.js`) run the compiled build, so it is brought up to date once before any
 * test runs (a fresh clone has no dist/; an edited source makes it stale).
 */
import { execFileSync } from "node:child_process"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")

export default function buildDist(): void {
  // A run that touches no compiled entry may skip the build (set while sources are mid-change).
  if (process.env.LOOPCORD_SKIP_BUILD === "1") return
  execFileSync(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], { cwd: root, stdio: "inherit" })
}
