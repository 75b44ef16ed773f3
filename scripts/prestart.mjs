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
// package.json's engines field is only advice to npm: say it plainly before anything half-works
// (native modules built for one Node major crash on another).
const major = Number(process.versions.node.split(".")[0])
if (major < 24) {
  process.stderr.write(`loopcord needs Node.js 24 or newer (this is ${process.version}); install the current LTS from https://nodejs.org\n`)
  process.exit(1)
}
// The build needs the devDependencies (esbuild, and effect, which it bundles), even where
// NODE_ENV=production would make npm leave them out.
if (!existsSync(join(root, "node_modules", ".package-lock.json"))) {
  execSync("npm ci --include=dev", { cwd: root, stdio: ["ignore", 2, 2] })
}
const { buildIfStale } = await import("./build.mjs")
await buildIfStale()
