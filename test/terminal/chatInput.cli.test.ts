import { assert, describe, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { classifyChatInput } from "../../src/terminal/chatInput"
import { repoRoot } from "./cliProcess"

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const env = { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? repoRoot, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", LLM_PROVIDER: "scripted" }

/** `node dist/main.js ARGS` with no DISCORD_TOKEN and stdin as given (what a container or a shell hands it). */
const start = (command: string, args: ReadonlyArray<string>, stdin: "ignore" | "pipe" | number, input?: string): Promise<Run> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, [...args], { cwd: repoRoot, env, stdio: [stdin, "pipe", "pipe"], timeout: 30_000 })
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    if (input !== undefined) child.stdin?.end(input)
  })

const app = (args: ReadonlyArray<string>, stdin: "ignore" | "pipe" | number, input?: string) =>
  start(process.execPath, [join(repoRoot, "dist/main.js"), ...args], stdin, input)

const kinds = (kind: "fifo" | "socket" | "file" | "other") => ({
  isFIFO: () => kind === "fifo",
  isSocket: () => kind === "socket",
  isFile: () => kind === "file"
})

describe("the terminal chat needs someone to chat with", () => {
  it("a terminal chats; a pipe, a socket or a file is read line by line; /dev/null or no stdin is nobody", () => {
    assert.strictEqual(classifyChatInput(statSync("/dev/null"), true), "terminal")
    assert.strictEqual(classifyChatInput(kinds("fifo"), false), "piped")
    assert.strictEqual(classifyChatInput(kinds("socket"), false), "piped")
    assert.strictEqual(classifyChatInput(statSync(join(repoRoot, "package.json")), false), "piped")
    assert.strictEqual(classifyChatInput(statSync("/dev/null"), false), "none")
    assert.strictEqual(classifyChatInput(undefined, false), "none")
  })

  it("no DISCORD_TOKEN and stdin /dev/null (a container without -it): one line naming DISCORD_TOKEN, exit 1, no chat banner", async () => {
    const run = await app([], "ignore")
    assert.strictEqual(run.code, 1, run.stderr)
    assert.strictEqual(run.stdout, "")
    const lines = run.stderr.trimEnd().split("\n")
    assert.strictEqual(lines.length, 1, run.stderr)
    assert.match(lines[0] ?? "", /^loopcord: DISCORD_TOKEN is not set and stdin is not a terminal, a pipe or a file/)
    assert.include(lines[0], "docker run -it")
  }, 30_000)

  it("--once needs no stdin: it runs its one turn with stdin /dev/null", async () => {
    const run = await app(["--once", "hi", "--json"], "ignore")
    assert.strictEqual(run.code, 0, run.stderr)
    assert.strictEqual(JSON.parse(run.stdout.trim()).text, "You said: hi")
  }, 30_000)

  it("lines piped in are answered one by one, then end of input exits 0", async () => {
    const run = await app([], "pipe", "first\nsecond\n")
    assert.strictEqual(run.code, 0, run.stderr)
    assert.include(run.stdout, "You said: first")
    assert.include(run.stdout, "You said: second")
  }, 30_000)

  it("a file as stdin is read like a pipe", async () => {
    const dir = mkdtempSync(join(tmpdir(), "loopcord-stdin-"))
    const file = join(dir, "messages.txt")
    writeFileSync(file, "from a file\n")
    const fd = openSync(file, "r")
    try {
      const run = await app([], fd)
      assert.strictEqual(run.code, 0, run.stderr)
      assert.include(run.stdout, "You said: from a file")
    } finally {
      closeSync(fd)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 30_000)

  // util-linux `script` gives the app a real pseudo-terminal.
  const hasScript = (() => {
    try {
      execFileSync("script", ["--version"], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  })()
  if (!hasScript) console.warn("chatInput.cli.test: util-linux `script` is not installed; the pseudo-terminal case is skipped")
  it.skipIf(!hasScript)("on a terminal (a pseudo-terminal) the chat opens, answers and leaves on /exit", async () => {
    const run = await new Promise<Run>((resolve, reject) => {
      const child = spawn("script", ["-qfec", `${JSON.stringify(process.execPath)} dist/main.js`, "/dev/null"], {
        cwd: repoRoot,
        env,
        stdio: ["pipe", "pipe", "pipe"],
        timeout: 30_000
      })
      let stdout = ""
      let typed: ReadonlyArray<string> = []
      const type = (line: string) => {
        typed = [...typed, line]
        child.stdin.write(`${line}\r`)
      }
      child.stdout.on("data", (chunk: Buffer) => {
        stdout += chunk.toString()
        // Type once the prompt is there, then leave once the reply is.
        if (typed.length === 0 && stdout.includes("you › ")) type("hello")
        if (typed.length === 1 && stdout.includes("You said: hello")) type("/exit")
      })
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr: "" }))
    })
    assert.strictEqual(run.code, 0, run.stdout)
    assert.include(run.stdout, "loopcord terminal chat as")
    assert.include(run.stdout, "You said: hello")
  }, 30_000)
})
