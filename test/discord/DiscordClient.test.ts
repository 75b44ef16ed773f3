import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Cause, Layer, Option, Schedule } from "effect"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { DiscordClient, DiscordStartupError } from "../../src/discord/DiscordClient"
import { fakeDiscord, waitUntil } from "../support/fakeDiscord"
import { makeLogCapture } from "../support/tools/logCapture"
import type { FakeDiscord } from "../support/fakeDiscord"

const clientLayer = (fake: FakeDiscord, token = fake.token) =>
  DiscordClient.layer.pipe(Layer.provide(DiscordConfig.make({ token, apiBaseUrl: fake.apiBase })))

const startupFailure = (fake: FakeDiscord, token?: string) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.scoped(Layer.build(clientLayer(fake, token))))
    assert.isTrue(Exit.isFailure(exit))
    const failure = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : Option.none()
    assert.isTrue(Option.isSome(failure))
    const error = Option.getOrThrow(failure)
    assert.instanceOf(error, DiscordStartupError)
    return error
  })

describe("DiscordClient", () => {
  it.live("logs a real discord.js client into the fake: READY, GUILD_CREATE, intents", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const client = yield* Effect.provide(DiscordClient, yield* Layer.build(clientLayer(fake)))
      assert.strictEqual(client.user.id, fake.bot.id)
      assert.isTrue(client.guilds.cache.has(fake.guild.id))
      assert.isTrue(client.channels.cache.has(fake.channel.id))
      // Guilds | GuildMessages | DirectMessages | MessageContent
      assert.strictEqual(fake.identifies[0]?.["intents"], 1 | 512 | 4096 | 32768)
      assert.deepStrictEqual(client.options.allowedMentions, { parse: [], repliedUser: false })
    }))

  it.live("a token rejected by REST (401) fails start-up with one line about the token", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const error = yield* startupFailure(fake, "wrong-token")
      assert.strictEqual(error.reason, "invalid_token")
      assert.match(error.message, /^Discord rejected DISCORD_TOKEN \(invalid token\): .*Reset Token\.$/)
      assert.notInclude(error.message, "\n")
    }))

  it.live("a gateway close 4004 (authentication failed) is reported as an invalid token", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord({ closeOnIdentify: 4004 })
      const error = yield* startupFailure(fake)
      assert.strictEqual(error.reason, "invalid_token")
    }))

  it.live("a gateway close 4014 (disallowed intents) says to enable the Message Content intent", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord({ closeOnIdentify: 4014 })
      const error = yield* startupFailure(fake)
      assert.strictEqual(error.reason, "disallowed_intents")
      assert.include(error.message, "Message Content Intent")
      assert.notInclude(error.message, "\n")
    }))

  it.live("[issue 11] gateway drops, reconnects and resumes are logged", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const logs = yield* makeLogCapture
      yield* logs.capture(Layer.build(clientLayer(fake)))
      fake.closeGateway(4000)
      yield* waitUntil(fake, "RESUME", () => fake.resumes > 0, 10_000)
      const lines = () => Effect.map(logs.logs, (all) => all.map((line) => `${line.level} ${line.message}`))
      yield* Effect.flatMap(lines(), (all) => (all.some((line) => line.includes("resumed")) ? Effect.void : Effect.fail("not yet"))).pipe(
        Effect.retry({ times: 100, schedule: Schedule.spaced("20 millis") })
      )
      const all = yield* lines()
      assert.include(all, "INFO Discord gateway: shard 0 reconnecting")
      assert.isTrue(all.some((line) => /^INFO Discord gateway: shard 0 resumed \(\d+ events replayed\)$/.test(line)), all.join("\n"))
    }))

  it.live("[issue 11] a close discord.js does not reconnect after (4014) is logged as an error", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const logs = yield* makeLogCapture
      yield* logs.capture(Layer.build(clientLayer(fake)))
      fake.closeGateway(4014)
      const disconnected = logs.matching("Discord gateway: shard 0 disconnected (close 4014) and will not reconnect")
      yield* Effect.flatMap(disconnected, (lines) => (lines.length > 0 ? Effect.void : Effect.fail("not yet"))).pipe(
        Effect.retry({ times: 200, schedule: Schedule.spaced("20 millis") })
      )
      assert.strictEqual((yield* disconnected)[0]?.level, "ERROR")
    }))
})
