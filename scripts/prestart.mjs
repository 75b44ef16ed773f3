/**
 * prestart (`npm start`, `npm run start:sharded`): a fresh clone installs its dependencies
 * (`npm ci`), then dist/ is rebuilt when a source is newer than it, so `npm start` is still the
 * only command a user needs.
 */
import { execSync } from "node:child_process"
import { existsSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
if (!existsSync(join(root, "node_modules", ".package-lock.json"))) {
  execSync("npm ci", { cwd: root, stdio: ["ignore", 2, 2] })
}
const { buildIfStale } = await import("./build.mjs")
await buildIfStale()
