import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { fileURLToPath } from "node:url"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { recommendedShards, runShards } from "../../src/discord/Sharding"
import { fakeDiscord } from "../support/fakeDiscord"

const child = fileURLToPath(new URL("./fixtures/shardChild.ts", import.meta.url))

describe("Sharding (npm run start:sharded)", () => {
  it.scopedLive("the ShardingManager runs one process per shard; each identifies its shard and gets its guilds", () =>
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

  it.scopedLive("a rejected token fails before any shard starts", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const exit = yield* Effect.exit(Effect.provide(recommendedShards, DiscordConfig.make({ token: "wrong", apiBaseUrl: fake.apiBase })))
      assert.isTrue(exit._tag === "Failure" && String(exit.cause).includes("DISCORD_TOKEN"))
    }))
})
