import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import { fakeDiscord, waitUntil } from "./support/fakeDiscord"

/** `npm start` as a user runs it, with DISCORD_TOKEN set: the real composition root, no test wiring. */
const startBot = (env: Record<string, string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      // What `npm start` runs (the test setup builds dist/).
      const child = spawn(process.execPath, ["dist/main.js"], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
      const output: Array<string> = []
      child.stdout?.on("data", (chunk: Buffer) => output.push(chunk.toString()))
      child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()))
      return { child, output }
    }),
    ({ child }) => stop(child)
  )

const stop = (child: ChildProcess) =>
  Effect.callback<number | null>((resume) => {
    if (child.exitCode !== null) return resume(Effect.succeed(child.exitCode))
    child.once("exit", (code) => resume(Effect.succeed(code)))
    child.kill("SIGTERM")
  })

describe("npm start (dist/main.js) with DISCORD_TOKEN (the whole app wired as shipped)", () => {
  it.live("logs into Discord, registers the commands, answers a mention with the configured model and stops on SIGTERM", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const { child, output } = yield* startBot({
        DISCORD_TOKEN: fake.token,
        DISCORD_API_BASE_URL: fake.apiBase,
        LLM_PROVIDER: "scripted",
        LLM_SCRIPT: JSON.stringify({ passes: ["Hello from the shipped wiring."], then: "repeat" }),
        DATABASE_URL: "sqlite::memory:",
        LOOPCORD_SECRET_KEY: Buffer.alloc(32, 9).toString("base64"),
        LOG_LEVEL: "info"
      })
      yield* waitUntil(fake, "slash commands registered", () => fake.registeredCommands.size > 0, 20_000).pipe(
        Effect.tapCause(() => Effect.sync(() => console.error(output.join(""))))
      )
      fake.userSays(fake.channel, "hi bot", { mentionBot: true })
      yield* waitUntil(fake, "the reply", () =>
        fake.botMessages(fake.channel.id).some((message) => message.content === "Hello from the shipped wiring."), 10_000)
      const names = [...fake.registeredCommands.values()].flat().map((command) => command["name"])
      assert.includeMembers(names, ["kill", "channel", "mcp", "tools", "capabilities", "key", "usage"])
      // Who pays for a turn is wired too: a personal key is sealed under LOOPCORD_SECRET_KEY and the turn runs on it.
      const setKey = fake.slash("key", { subcommand: "personal", options: { value: "sk-shipped-0123456789" } })
      yield* waitUntil(fake, "/key personal", () => setKey.original !== undefined, 10_000)
      assert.include(setKey.original?.content ?? "", "Your personal API key is saved")
      fake.userSays(fake.channel, "again", { mentionBot: true })
      yield* waitUntil(fake, "the reply on the personal key", () =>
        fake.botMessages(fake.channel.id).filter((message) => message.content === "Hello from the shipped wiring.").length === 2, 10_000)
      const usage = fake.slash("usage")
      yield* waitUntil(fake, "/usage", () => usage.original !== undefined, 10_000)
      assert.include(usage.original?.content ?? "", "own key 1")
      assert.notInclude(output.join(""), "LOOPCORD_SECRET_KEY is not set")
      const code = yield* stop(child)
      assert.notStrictEqual(code, 1, output.join(""))
    }), { timeout: 60_000 })

  it.live("without LOOPCORD_SECRET_KEY: one start-up line says secrets will be refused, and /key personal is refused", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const { output } = yield* startBot({
        DISCORD_TOKEN: fake.token,
        DISCORD_API_BASE_URL: fake.apiBase,
        LLM_PROVIDER: "scripted",
        DATABASE_URL: "sqlite::memory:",
        LOOPCORD_SECRET_KEY: "",
        LOG_LEVEL: "info"
      })
      yield* waitUntil(fake, "slash commands registered", () => fake.registeredCommands.size > 0, 20_000)
      const lines = output.join("").split("\n").filter((line) => line.includes("LOOPCORD_SECRET_KEY is not set"))
      assert.strictEqual(lines.length, 1, output.join(""))
      assert.include(lines[0], "/key, guild MCP headers and guild MCP URLs with a secret path or query will be refused")
      const setKey = fake.slash("key", { subcommand: "personal", options: { value: "sk-unsealable-0123456789" } })
      yield* waitUntil(fake, "/key personal", () => setKey.original !== undefined, 10_000)
      assert.include(setKey.original?.content ?? "", "has not set LOOPCORD_SECRET_KEY")
      assert.notInclude(setKey.original?.content ?? "", "sk-unsealable")
    }), { timeout: 60_000 })
})
