import { assert, describe, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { NODE_MEMORY_FLAGS } from "../../src/discord/nodeMemoryFlags"

const root = join(import.meta.dirname, "..", "..")
const read = (file: string) => readFileSync(join(root, file), "utf8")

describe("the bot's V8 memory flags are applied wherever a bot process starts", () => {
  it("npm start and npm run start:sharded pass them to node", () => {
    const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts
    assert.strictEqual(scripts["start"], `node ${NODE_MEMORY_FLAGS.join(" ")} dist/main.js`)
    assert.strictEqual(scripts["start:sharded"], `node ${NODE_MEMORY_FLAGS.join(" ")} dist/sharded.js`)
  })

  it("the Docker image runs node with them", () => {
    const cmd = read("Dockerfile").split("\n").filter((line) => line.startsWith("CMD ")).at(-1) ?? ""
    assert.deepStrictEqual(JSON.parse(cmd.slice("CMD ".length)), ["node", ...NODE_MEMORY_FLAGS, "dist/main.js"])
  })

  it("this Node takes them (an unknown flag would stop node before the bot starts)", () => {
    const heap = execFileSync(process.execPath, [...NODE_MEMORY_FLAGS, "-p", "require('node:v8').getHeapStatistics().heap_size_limit"], { encoding: "utf8" })
    assert.match(heap, /^\d+\n$/)
  })
})
