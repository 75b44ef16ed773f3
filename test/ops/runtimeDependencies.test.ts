import { assert, describe, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "../terminal/cliProcess"

/**
 * The image keeps only `dependencies` (`npm prune --omit=dev`), so they are exactly the
 * packages the compiled app loads: one that is only there because npm hoisted it for another
 * disappears the day that one stops needing it, and one the build bundles (effect, @effect/*)
 * or a build tool is dead weight in the image. The build records what dist/ imports
 * (scripts/build.mjs, from esbuild's metafile); the test setup has just built it.
 */
const read = (file: string): unknown => JSON.parse(readFileSync(join(repoRoot, file), "utf8"))
const manifest = read("package.json") as { dependencies: Record<string, string>; devDependencies: Record<string, string> }
const loaded = read("dist/.runtime-packages.json") as ReadonlyArray<string>

describe("the packages dist/ loads are the declared dependencies", () => {
  it("the build recorded what dist/ imports: the packages the bot cannot start without are there", () => {
    // PostgreSQL is @effect/sql-pg's own client, bundled: no driver package.
    assert.includeMembers([...loaded], ["discord.js", "undici", "better-sqlite3"])
    for (const name of loaded) assert.notMatch(name, /^node:|^\.|\/.*\//, `${name} is a package name`)
  })

  it("every package dist/ imports is in dependencies (not devDependencies, not hoisted from another package)", () => {
    const undeclared = loaded.filter((name) => manifest.dependencies[name] === undefined)
    assert.deepStrictEqual(undeclared, [], "add these to dependencies in package.json (npm install --save NAME@RANGE)")
  })

  it("dependencies holds nothing else: what the build bundles (effect, @effect/*) or tools (esbuild, tsx) stay out of the image", () => {
    const notLoaded = Object.keys(manifest.dependencies).filter((name) => !loaded.includes(name))
    assert.deepStrictEqual(notLoaded, [], "dist/ never loads these: move them to devDependencies in package.json")
    assert.includeMembers(Object.keys(manifest.devDependencies), ["effect", "esbuild", "tsx"])
  })
})
