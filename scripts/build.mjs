/**
 * `npm run build`: compiles the application into dist/ with esbuild, so `npm start` runs plain
 * JavaScript instead of transpiling TypeScript through tsx at every start.
 *
 * - dist/main.js (the entry), dist/sharded.js (`npm run start:sharded`) and the chunks they
 *   share; code splitting keeps each `import()` of the composition root (the Discord front,
 *   a provider, the MCP SDK...) in a chunk of its own that loads only when it is used.
 * - dist/htmlToMarkdownWorker.js: the HTML→Markdown worker thread, self-contained.
 * - effect and @effect/* are bundled (tree-shaken: importing the `effect` barrel from
 *   node_modules evaluates all its modules); every other package stays external and loads from
 *   node_modules.
 *
 * `node scripts/build.mjs --if-stale` builds only when a source is newer than the last build
 * (a stat of every file under src/, no esbuild loaded otherwise): prestart and the test setup
 * run it. Plain JavaScript, so it runs before anything is compiled.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs"
import { isBuiltin } from "node:module"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "dist")
const stamp = join(dist, ".build-stamp")
/** The packages dist/ loads from node_modules, as the build saw them (read by the packaging test). */
const packagesFile = join(dist, ".runtime-packages.json")

/** What the build reads besides src/: a change to any of these rebuilds too. */
const buildInputs = ["package.json", "package-lock.json", "tsconfig.json", "scripts/build.mjs"]
/** Outputs a process started from the previous build may still import: kept this long. */
const KEEP_OLD_OUTPUTS_MS = 10 * 60 * 1000

/** Newest modification time under `dir` (files and directories: a deleted file changes its directory). */
const newestUnder = (dir) => {
  let newest = statSync(dir).mtimeMs
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(path) : statSync(path).mtimeMs)
  }
  return newest
}

/** True when dist/ is missing an entry or a source changed after the last build started. */
export const isStale = () => {
  if (!existsSync(stamp) || !existsSync(join(dist, "main.js")) || !existsSync(join(dist, "sharded.js"))) return true
  const built = statSync(stamp).mtimeMs
  if (newestUnder(join(root, "src")) > built) return true
  return buildInputs.some((file) => existsSync(join(root, file)) && statSync(join(root, file)).mtimeMs > built)
}

/** Bare imports other than effect and @effect/* stay imports of node_modules. */
const externalPackages = {
  name: "external-packages",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) =>
      /^(effect|@effect\/[^/]+)(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true })
  }
}

/** The named exports of the `effect` barrel that are functions of effect/Function, not modules. */
const functionExports = new Set(["absurd", "cast", "flow", "hole", "identity", "pipe"])

/**
 * `import { Effect, Layer } from "effect"` → `import * as Effect from "effect/Effect"; …`, and
 * the same for the barrels of effect's folders (`import { HttpClient } from "effect/http"` →
 * `import * as HttpClient from "effect/http/HttpClient"`).
 * esbuild keeps every member of a namespace re-exported by a barrel (`export * as Effect`),
 * so through the barrel the whole library is bundled and evaluated at start-up; a namespace
 * imported from its own module is tree-shaken to what the code uses.
 */
export const rewriteEffectBarrel = (source) =>
  source.replace(/import\s*\{([^}]*)\}\s*from\s*"effect(\/[a-z-]+)?"/g, (_whole, list, folder = "") => {
    const statements = []
    for (const raw of list.split(",")) {
      const member = raw.trim()
      if (member.length === 0 || member.startsWith("type ")) continue
      const [name, alias = name] = member.split(/\s+as\s+/)
      statements.push(folder === "" && functionExports.has(name)
        ? `import { ${name} as ${alias} } from "effect/Function"`
        : `import * as ${alias} from "effect${folder}/${name}"`)
    }
    return statements.length === 0 ? `import {} from "effect${folder}"` : statements.join("; ")
  })

const effectModules = {
  name: "effect-modules",
  setup(build) {
    build.onLoad({ filter: /\/src\/.*\.ts$/ }, async (args) => {
      const { readFile } = await import("node:fs/promises")
      return { contents: rewriteEffectBarrel(await readFile(args.path, "utf8")), loader: "ts" }
    })
  }
}

const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node24",
  sourcemap: "linked",
  plugins: [externalPackages, effectModules],
  logLevel: "warning",
  metafile: true,
  // Less source for V8 to parse at every start; identifiers are kept so stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true
}

/** `pg-cursor/x` → `pg-cursor`, `@scope/name/x` → `@scope/name`. */
const packageOf = (specifier) => specifier.split("/").slice(0, specifier.startsWith("@") ? 2 : 1).join("/")

/**
 * Every package the outputs import at run time (static, dynamic or require), from esbuild's
 * metafiles: what `npm prune --omit=dev` must keep, so each must be a declared dependency.
 */
export const runtimePackages = (metafiles) => {
  const packages = new Set()
  for (const metafile of metafiles) {
    for (const output of Object.values(metafile.outputs)) {
      for (const entry of output.imports) {
        if (entry.external && !isBuiltin(entry.path)) packages.add(packageOf(entry.path))
      }
    }
  }
  return [...packages].sort()
}

export const build = async () => {
  const startedAt = Date.now()
  const esbuild = await import("esbuild")
  mkdirSync(dist, { recursive: true })
  const app = await esbuild.build({
    ...common,
    entryPoints: { main: join(root, "src/main.ts"), sharded: join(root, "src/sharded.ts") },
    outdir: dist,
    splitting: true,
    // One flat directory: the HTML worker sits next to every chunk that starts it.
    chunkNames: "[name]-[hash]"
  })
  const worker = await esbuild.build({
    ...common,
    entryPoints: { htmlToMarkdownWorker: join(root, "src/fetch/html/htmlToMarkdownWorker.ts") },
    outdir: dist
  })
  writeFileSync(packagesFile, `${JSON.stringify(runtimePackages([app.metafile, worker.metafile]), null, 2)}\n`)
  const written = new Set([...Object.keys(app.metafile.outputs), ...Object.keys(worker.metafile.outputs)].map((file) => join(root, file)))
  written.add(packagesFile)
  removeOldOutputs(dist, written, startedAt)
  writeFileSync(stamp, `${new Date(startedAt).toISOString()}\n`)
  // The stamp says when the build started: a source saved during the build is newer than it.
  utimesSync(stamp, startedAt / 1000, startedAt / 1000)
  return { files: written.size, ms: Date.now() - startedAt }
}

/** Outputs of earlier builds, once no process can still be starting from them. */
const removeOldOutputs = (dir, written, now) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      removeOldOutputs(path, written, now)
      continue
    }
    if (written.has(path) || path === stamp) continue
    if (now - statSync(path).mtimeMs > KEEP_OLD_OUTPUTS_MS) rmSync(path, { force: true })
  }
}

/** Builds when stale (or always without `--if-stale`); returns whether it built. */
export const buildIfStale = async () => {
  if (!isStale()) return false
  const result = await build()
  process.stderr.write(`loopcord: built ${relative(process.cwd(), dist) || "dist"}/ (${result.files} files, ${result.ms} ms)\n`)
  return true
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]
if (isMain) {
  const ifStale = process.argv.includes("--if-stale")
  await (ifStale ? buildIfStale() : build().then((result) => {
    process.stderr.write(`loopcord: built dist/ (${result.files} files, ${result.ms} ms)\n`)
  }))
}
