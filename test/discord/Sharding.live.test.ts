import { assert, describe, it } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { NODE_MEMORY_FLAGS } from "../../src/discord/nodeMemoryFlags"
import { recommendedShards, runShards, shardExecArgv } from "../../src/discord/Sharding"
import { fakeDiscord, waitUntil } from "../support/fakeDiscord"
import { makeLogCapture } from "../support/tools/logCapture"

const child = fileURLToPath(new URL("./fixtures/shardChild.ts", import.meta.url))

describe("Sharding (npm run start:sharded)", () => {
  it.live("the ShardingManager runs one process per shard; each identifies its shard and gets its guilds", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord({ shards: 2 })
      for (const name of ["two", "three", "four"]) fake.addGuild(name)
      const config = DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase })
      assert.strictEqual(yield* Effect.provide(recommendedShards, config), 2)
      // Shard processes inherit the environment: point them at the fake.
      const previous = process.env["DISCORD_API_BASE_URL"]
      process.env["DISCORD_API_BASE_URL"] = fake.apiBase
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        if (previous === undefined) delete process.env["DISCORD_API_BASE_URL"]
        else process.env["DISCORD_API_BASE_URL"] = previous
      }))
      const manager = yield* runShards({ entry: child, spawnDelay: 0 }).pipe(Effect.provide(config))
      const shards = fake.identifies.map((identify) => identify["shard"])
      assert.sameDeepMembers(shards as Array<unknown>, [[0, 2], [1, 2]])
      const guildCounts = yield* Effect.promise(() => manager.fetchClientValues("guilds.cache.size") as Promise<ReadonlyArray<number>>)
      assert.strictEqual(guildCounts.reduce((sum, count) => sum + count, 0), 4)
    }), 60_000)

  it.live("[issue 27] the shard processes of one host share one request budget: a burst from both stays under the host's rate", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord({ shards: 2, globalLimit: { perSecond: 50 } })
      const previous = process.env["DISCORD_API_BASE_URL"]
      process.env["DISCORD_API_BASE_URL"] = fake.apiBase
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        if (previous === undefined) delete process.env["DISCORD_API_BASE_URL"]
        else process.env["DISCORD_API_BASE_URL"] = previous
      }))
      const config = DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase, globalRequestsPerSecond: 8 })
      const manager = yield* runShards({ entry: child, spawnDelay: 0 }).pipe(Effect.provide(config))
      const since = Date.now()
      // Each process sends 12 typing requests at once through its own client.
      yield* Effect.promise(() =>
        manager.broadcastEval(
          (client, context) => Promise.all(Array.from({ length: 12 }, () => client.rest.post(`/channels/${context.channelId}/typing`))).then(() => true),
          { context: { channelId: fake.channel.id } }
        ))
      const typing = fake.requestsTo("POST", /\/typing$/).filter((request) => request.at >= since)
      assert.strictEqual(typing.length, 24)
      assert.isAtMost(fake.peakRequestsPerWindow(1000, since), 8, "8 per second for the host, not per process")
      assert.isAtLeast(Math.max(...typing.map((request) => request.at)) - since, 1900, "24 requests at 8/s take over 2 s")
    }), 60_000)

  it.live("[issue 11] a shard that dies and then fails to start again is retried with backoff (logged); the manager survives and the shard comes back", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const config = DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase })
      const previous = process.env["DISCORD_API_BASE_URL"]
      process.env["DISCORD_API_BASE_URL"] = fake.apiBase
      yield* Effect.addFinalizer(() => Effect.sync(() => {
        if (previous === undefined) delete process.env["DISCORD_API_BASE_URL"]
        else process.env["DISCORD_API_BASE_URL"] = previous
      }))
      const logs = yield* makeLogCapture
      const manager = yield* logs.capture(runShards({ entry: child, totalShards: 1, spawnDelay: 0, respawnBackoff: { initial: "200 millis", max: "1 second" } }).pipe(Effect.provide(config)))
      const shard = manager.shards.get(0)
      assert.isDefined(shard)
      // The shard cannot log in any more (its process exits at once), then it dies.
      fake.refuseIdentify = 4004
      shard?.process?.kill()
      const failed = logs.matching("Discord sharding: shard 0 failed to start")
      yield* Effect.flatMap(failed, (lines) => (lines.length >= 2 ? Effect.void : Effect.fail(lines.length))).pipe(
        Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 600 })
      )
      assert.isTrue((yield* failed).every((line) => line.level === "ERROR"))
      assert.include((yield* failed)[1]?.message ?? "", "trying again in")
      // Discord lets it in again: the next try brings it back.
      fake.refuseIdentify = undefined
      const identified = fake.identifies.length
      const back = logs.matching("Discord sharding: shard 0 is running again")
      yield* Effect.flatMap(back, (lines) => (lines.length >= 1 ? Effect.void : Effect.fail(lines.length))).pipe(
        Effect.retry({ schedule: Schedule.spaced("100 millis"), times: 600 })
      )
      yield* waitUntil(fake, "the shard identified again", () => fake.identifies.length > identified, 30_000)
      const guildCounts = yield* Effect.promise(() => manager.fetchClientValues("guilds.cache.size") as Promise<ReadonlyArray<number>>)
      assert.deepStrictEqual(guildCounts, [1])
      assert.isAtLeast((yield* logs.matching("Discord sharding: shard 0 exited; starting it again")).length, 1)
    }), 120_000)

  it.live("a rejected token fails before any shard starts", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const exit = yield* Effect.exit(Effect.provide(recommendedShards, DiscordConfig.make({ token: "wrong", apiBaseUrl: fake.apiBase })))
      assert.isTrue(exit._tag === "Failure" && String(exit.cause).includes("DISCORD_TOKEN"))
    }))

  it.live("npm run start:sharded runs compiled: dist/sharded.js starts dist/main.js per shard, every shard logs in and answers; SIGTERM stops them all", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord({ shards: 2 })
      const output: Array<string> = []
      const child = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const process_ = spawn(process.execPath, ["dist/sharded.js"], {
            env: {
              ...process.env,
              DISCORD_TOKEN: fake.token,
              DISCORD_API_BASE_URL: fake.apiBase,
              LLM_PROVIDER: "scripted",
              LLM_SCRIPT: JSON.stringify({ passes: ["Hello from a compiled shard."], then: "repeat" }),
              DATABASE_URL: "sqlite::memory:",
              LOG_LEVEL: "info"
            },
            stdio: ["ignore", "pipe", "pipe"]
          })
          process_.stdout.on("data", (chunk: Buffer) => output.push(chunk.toString()))
          process_.stderr.on("data", (chunk: Buffer) => output.push(chunk.toString()))
          return process_
        }),
        (started) => Effect.sync(() => started.kill("SIGKILL"))
      )
      // discord.js waits 5.5 s between shard starts.
      yield* waitUntil(fake, "both shards identified", () => fake.identifies.length >= 2, 40_000).pipe(
        Effect.tapCause(() => Effect.sync(() => console.error(output.join(""))))
      )
      assert.sameDeepMembers(fake.identifies.map((identify) => identify["shard"]) as Array<unknown>, [[0, 2], [1, 2]])
      yield* waitUntil(fake, "slash commands registered", () => fake.registeredCommands.size > 0, 20_000)
      // Every shard ready (the guild's owner may be the last one to start).
      yield* waitUntil(fake, "all shards running", () => output.join("").includes("2 shard(s) running"), 40_000)
      fake.userSays(fake.channel, "hi shards", { mentionBot: true })
      yield* waitUntil(fake, "the reply", () =>
        fake.botMessages(fake.channel.id).some((message) => message.content === "Hello from a compiled shard."), 20_000).pipe(
        Effect.tapCause(() => Effect.sync(() => console.error(output.join(""))))
      )
      const code = yield* Effect.callback<number | null>((resume) => {
        child.once("exit", (exitCode) => resume(Effect.succeed(exitCode)))
        child.kill("SIGTERM")
      })
      assert.notStrictEqual(code, 1, output.join(""))
      // The shard processes went with it: their gateway connections closed.
      yield* waitUntil(fake, "every shard's gateway connection closed", () => fake.gatewayConnections === 0, 20_000)
    }), 90_000)

  it("shard processes run with the memory flags, and load a TypeScript entry through tsx", () => {
    assert.deepStrictEqual(shardExecArgv("/app/src/main.ts"), [...NODE_MEMORY_FLAGS, "--import", "tsx"])
    assert.deepStrictEqual(shardExecArgv("/app/dist/main.js"), NODE_MEMORY_FLAGS)
  })
})
