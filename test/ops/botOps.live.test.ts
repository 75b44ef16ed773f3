import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Schedule } from "effect"
import { createServer, type Server } from "node:net"
import type { AddressInfo } from "node:net"
import { STOPPED_MARKER } from "../../src/discord/DiscordReplySink"
import { awaitOutput, type BotProcess, startBotProcess, stopBotProcess } from "../support/botProcess"
import { type FakeDiscord, fakeDiscord, waitUntil } from "../support/fakeDiscord"

/** A reply of `count` sentences streamed `gapMs` apart. */
const slowReply = (count: number, gapMs: number) =>
  JSON.stringify({
    passes: [Array.from({ length: count }, (_, index) => [{ text: `Sentence ${index + 1}. ` }, { sleepMs: gapMs }]).flat()],
    then: "echo"
  })

const botEnv = (fake: FakeDiscord, extra: Record<string, string>) => ({
  DISCORD_TOKEN: fake.token,
  DISCORD_API_BASE_URL: fake.apiBase,
  LLM_PROVIDER: "scripted",
  DATABASE_URL: "sqlite::memory:",
  LOG_LEVEL: "info",
  ...extra
})

const ready = (fake: FakeDiscord) => waitUntil(fake, "slash commands registered", () => fake.registeredCommands.size > 0, 60_000)

/** The base URL the health server announced. */
const healthUrl = (bot: BotProcess) => Effect.map(awaitOutput(bot, /Health server listening on (http:\/\/[\d.]+:\d+)/), (match) => match[1] ?? "")

const readyz = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${url}/readyz`)
    return { status: response.status, body: (await response.json()) as { ready: boolean; checks: Record<string, string> } }
  })

/** Polls /readyz until its status is `status`; returns the last body. */
const readyzBecomes = (url: string, status: number) =>
  readyz(url).pipe(
    Effect.filterOrFail((answer) => answer.status === status, () => "not yet" as const),
    Effect.retry(Schedule.spaced(Duration.millis(100))),
    Effect.timeoutOrElse({ duration: Duration.seconds(45), orElse: () => Effect.fail(new Error(`/readyz never answered ${status}`)) }),
    Effect.orDie
  )

const lastReply = (fake: FakeDiscord) => fake.botMessages(fake.channel.id).at(-1)?.content ?? ""

describe("operations of the Discord bot (src/main.ts in a child process, fake Discord)", () => {
  it.live("/readyz flips with the gateway connection; /healthz stays up", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const bot = yield* startBotProcess(botEnv(fake, { HEALTH_PORT: "0", HEALTH_HOST: "127.0.0.1" }))
      const url = yield* healthUrl(bot)
      yield* ready(fake)
      const up = yield* readyzBecomes(url, 200)
      assert.deepStrictEqual(up.body, { ready: true, checks: { discord: "ok", database: "ok", startup: "ok" } })

      fake.interruptGateway()
      const down = yield* readyzBecomes(url, 503)
      assert.notStrictEqual(down.body.checks["discord"], "ok")
      assert.strictEqual(down.body.checks["database"], "ok")
      const alive = yield* Effect.promise(() => fetch(`${url}/healthz`).then((response) => response.status))
      assert.strictEqual(alive, 200, "the process is alive while the gateway is down")

      fake.restoreGateway()
      yield* readyzBecomes(url, 200)
      assert.strictEqual(yield* stopBotProcess(bot), 0, bot.output())
    }), { timeout: 150_000 })

  it.live("SIGTERM during a reply: it completes, a message meanwhile is not taken, the process exits 0", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const bot = yield* startBotProcess(botEnv(fake, { LLM_SCRIPT: slowReply(30, 100) }))
      yield* ready(fake)
      fake.userSays(fake.channel, "tell me thirty things", { mentionBot: true })
      yield* waitUntil(fake, "the reply to start", () => lastReply(fake).includes("Sentence 1."), 30_000)
      bot.child.kill("SIGTERM")
      yield* awaitOutput(bot, /Shutting down: 1 channel\(s\) busy/)
      fake.userSays(fake.channel, "and one more", { mentionBot: true })
      const code = yield* Deferred.await(bot.exited)
      assert.strictEqual(code, 0, bot.output())
      const replies = fake.botMessages(fake.channel.id)
      assert.strictEqual(replies.length, 1, "the message that came during the drain got no reply")
      assert.include(replies[0]?.content, "Sentence 30.")
      assert.notInclude(replies[0]?.content, "stopped")
      assert.match(bot.output(), /Shutting down: every reply finished/)
    }), { timeout: 150_000 })

  it.live("a reply still running when SHUTDOWN_GRACE_MS runs out keeps its text, marked stopped; exit 0", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const bot = yield* startBotProcess(botEnv(fake, { LLM_SCRIPT: slowReply(60, 500), SHUTDOWN_GRACE_MS: "1500" }))
      yield* ready(fake)
      fake.userSays(fake.channel, "tell me sixty things", { mentionBot: true })
      yield* waitUntil(fake, "the reply to start", () => lastReply(fake).includes("Sentence 1."), 30_000)
      bot.child.kill("SIGTERM")
      const code = yield* Deferred.await(bot.exited)
      assert.strictEqual(code, 0, bot.output())
      const reply = lastReply(fake)
      assert.isTrue(reply.endsWith(STOPPED_MARKER), `${reply}\n${bot.output()}`)
      assert.include(reply, "Sentence 1.")
      assert.notInclude(reply, "Sentence 60.")
      assert.match(bot.output(), /the grace period ran out; replies in 1 channel\(s\) were stopped/)
    }), { timeout: 150_000 })

  it.live("a health port already in use: one start-up line, exit 1", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const occupied = yield* Effect.acquireRelease(
        Effect.promise(() => new Promise<Server>((resolve) => {
          const server = createServer().listen(0, "127.0.0.1", () => resolve(server))
        })),
        (server) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
      )
      const port = (occupied.address() as AddressInfo).port
      const bot = yield* startBotProcess(botEnv(fake, { HEALTH_PORT: String(port), HEALTH_HOST: "127.0.0.1" }))
      const code = yield* Deferred.await(bot.exited)
      assert.strictEqual(code, 1)
      assert.strictEqual(
        bot.output(),
        `loopcord: HEALTH_PORT ${port}: 127.0.0.1:${port} is already in use by another process; choose a free port or unset HEALTH_PORT\n`
      )
    }), { timeout: 90_000 })
})
