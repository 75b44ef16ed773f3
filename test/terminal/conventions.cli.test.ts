import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { anthropicStream, messageDelta, messageStart, messageStop, textBlock } from "../support/fakeProviders/anthropic"
import { startFakeLlmServer } from "../support/fakeProviders/FakeLlmServer"
import { geminiFinish, geminiStream, geminiText } from "../support/fakeProviders/gemini"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const tsx = join(root, "node_modules", ".bin", "tsx")
const entry = join(root, "src", "main.ts")

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** `src/main.ts` as a child process in `cwd` (where a `.env` may lie), with only the variables given. */
const start = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Run> =>
  new Promise((resolve) => {
    execFile(tsx, [entry, ...args], {
      cwd,
      timeout: 90_000,
      env: { PATH: process.env["PATH"] ?? "", HOME: process.env["HOME"] ?? root, NO_COLOR: "1", DATABASE_URL: "sqlite::memory:", ...env }
    }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr })
    })
  })

const withDirectory = async <A>(dotenv: string | undefined, use: (directory: string) => Promise<A>): Promise<A> => {
  const directory = await mkdtemp(join(tmpdir(), "loopcord-cli-"))
  try {
    if (dotenv !== undefined) await writeFile(join(directory, ".env"), dotenv)
    return await use(directory)
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
}

const report = (run: Run) => {
  assert.strictEqual(run.code, 0, run.stderr)
  return JSON.parse(run.stdout.trim()) as { readonly status: string; readonly text: string }
}

describe("conventional configuration (child process)", () => {
  it("a .env in the working directory is read; the real environment wins over it", async () => {
    const dotenv = [
      "# the bot's settings",
      "LLM_PROVIDER=scripted",
      `LLM_SCRIPT='{"passes":["Configured by .env."]}'`,
      "LOG_LEVEL=error"
    ].join("\n")
    await withDirectory(dotenv, async (directory) => {
      const [fromFile, fromEnv] = await Promise.all([
        start(directory, ["--once", "hi", "--json"]),
        start(directory, ["--once", "hi", "--json"], { LLM_SCRIPT: JSON.stringify({ passes: ["Configured by the environment."] }) })
      ])
      assert.strictEqual(report(fromFile).text, "Configured by .env.")
      assert.strictEqual(report(fromEnv).text, "Configured by the environment.")
      assert.strictEqual(fromFile.stderr, "", "LOG_LEVEL=error from .env silences the info logs")
    })
  }, 120_000)

  it("an unparsable .env stops start-up with one line naming the file and the line", async () => {
    await withDirectory("LLM_PROVIDER=scripted\nDISCORD_TOKEN is secret\n", async (directory) => {
      const run = await start(directory, ["--once", "hi", "--json"])
      assert.strictEqual(run.code, 1)
      assert.strictEqual(run.stdout, "")
      assert.strictEqual(run.stderr, `loopcord: ${join(directory, ".env")} line 2: expected KEY=VALUE\n`)
    })
  }, 120_000)

  it("OPENAI_API_KEY / OPENAI_BASE_URL, ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL, GEMINI_API_KEY reach their provider", async () => {
    const openai = await startFakeLlmServer()
    const anthropic = await startFakeLlmServer()
    const gemini = await startFakeLlmServer()
    try {
      openai.enqueue(openAiStream([textChunk("from openai"), finishChunk("stop")]))
      anthropic.enqueue(anthropicStream([messageStart(), ...textBlock(0, ["from anthropic"]), messageDelta("end_turn", 2), messageStop()]))
      gemini.enqueue(geminiStream([geminiText("from gemini"), geminiFinish("STOP")]))
      const vendorKeys = {
        OPENAI_API_KEY: "sk-openai-fallback",
        OPENAI_BASE_URL: `${openai.url}/v1`,
        ANTHROPIC_API_KEY: "sk-ant-fallback",
        ANTHROPIC_BASE_URL: anthropic.url,
        GEMINI_API_KEY: "gemini-fallback"
      }
      const [viaOpenAi, viaAnthropic, viaGemini] = await withDirectory(undefined, (directory) =>
        Promise.all([
          start(directory, ["--once", "hi", "--json"], { ...vendorKeys, LLM_MODELS: "gpt-test" }),
          start(directory, ["--once", "hi", "--json"], { ...vendorKeys, LLM_PROVIDER: "anthropic", LLM_MODELS: "claude-test" }),
          // Gemini has no vendor base-URL variable: LLM_BASE_URL points it at the fake.
          start(directory, ["--once", "hi", "--json"], { ...vendorKeys, LLM_PROVIDER: "google", LLM_MODELS: "gemini-test", LLM_BASE_URL: gemini.url })
        ]))
      assert.strictEqual(report(viaOpenAi).text, "from openai")
      assert.strictEqual(report(viaAnthropic).text, "from anthropic")
      assert.strictEqual(report(viaGemini).text, "from gemini")
      assert.strictEqual(openai.requests[0]?.headers["authorization"], "Bearer sk-openai-fallback")
      assert.strictEqual(anthropic.requests[0]?.headers["x-api-key"], "sk-ant-fallback")
      assert.strictEqual(gemini.requests[0]?.headers["x-goog-api-key"], "gemini-fallback")
    } finally {
      await Promise.all([openai.close(), anthropic.close(), gemini.close()])
    }
  }, 120_000)

  it("--version prints the version; --help lists every setting with its default", async () => {
    const [version, help] = await withDirectory(undefined, (directory) =>
      Promise.all([start(directory, ["--version"]), start(directory, ["--help"])]))
    assert.strictEqual(version.code, 0, version.stderr)
    assert.match(version.stdout, /^loopcord \d+\.\d+\.\d+\n$/)
    assert.strictEqual(help.code, 0, help.stderr)
    for (const name of ["LLM_PROVIDER", "OPENAI_API_KEY", "DATABASE_URL", "HEALTH_PORT", "SHUTDOWN_GRACE_MS", "DISCORD_SHARD_IDS"]) {
      assert.match(help.stdout, new RegExp(`^ {2}${name} +\\S.*\\[(default|unset)`, "m"), name)
    }
    assert.include(help.stdout, "--version")
  }, 120_000)
})
