import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Redacted } from "effect"
import { awaitOutput, startBotProcess, stopBotProcess } from "../support/botProcess"
import { type FakeChannel, fakeDiscord, waitUntil } from "../support/fakeDiscord"
import { fakeLlmServer, jsonResponse } from "../support/fakeProviders/FakeLlmServer"
import { finishChunk, openAiStream, textChunk } from "../support/fakeProviders/openAiCompatible"
import { postgres } from "../store/databases"

const shardOf = (guildId: string, count: number) => Number((BigInt(guildId) >> 22n) % BigInt(count))

describe("several hosts split one bot's shards (DISCORD_SHARD_IDS, PostgreSQL)", () => {
  it.live("two processes with disjoint shard lists each answer their own guild; a 429 on one rests the key on the other", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord({ shards: 2 })
      // One guild (with a channel) on each shard.
      const channels = new Map<number, FakeChannel>()
      channels.set(shardOf(fake.guild.id, 2), fake.channel)
      while (channels.size < 2) {
        const guild = fake.addGuild(`guild ${channels.size}`)
        const shard = shardOf(guild.id, 2)
        if (!channels.has(shard)) channels.set(shard, fake.addChannel({ kind: "text", name: "general", guildId: guild.id }))
      }
      const onShard0 = channels.get(0)
      const onShard1 = channels.get(1)
      if (onShard0 === undefined || onShard1 === undefined) return assert.fail("a guild per shard")

      // key-a is rate-limited on its first use; every other request is answered.
      const llm = yield* fakeLlmServer()
      let keyALimited = false
      llm.setHandler((request) => {
        if (request.headers["authorization"] === "Bearer key-a" && !keyALimited) {
          keyALimited = true
          return jsonResponse(429, { error: { message: "Rate limit reached", type: "rate_limit_exceeded" } }, { "retry-after": "60" })
        }
        return openAiStream([textChunk(`answered with ${String(request.headers["authorization"]).slice(7)}`), finishChunk("stop")])
      })

      const target = yield* postgres.target
      if (target._tag !== "Postgres") return assert.fail("PostgreSQL")
      const env = (shardIds: string) => ({
        DISCORD_TOKEN: fake.token,
        DISCORD_API_BASE_URL: fake.apiBase,
        DISCORD_SHARD_IDS: shardIds,
        DISCORD_SHARD_COUNT: "2",
        DATABASE_URL: Redacted.value(target.url),
        LLM_PROVIDER: "openai-compatible",
        LLM_BASE_URL: `${llm.url}/v1`,
        LLM_API_KEYS: "key-a,key-b",
        LLM_MODELS: "test-model",
        LOG_LEVEL: "info"
      })
      const hostA = yield* startBotProcess(env("0"))
      const hostB = yield* startBotProcess(env("1"))
      yield* awaitOutput(hostA, /Discord: answering as/)
      yield* awaitOutput(hostB, /Discord: answering as/)
      assert.sameDeepMembers(fake.identifies.map((identify) => identify["shard"]) as Array<unknown>, [[0, 2], [1, 2]])

      fake.userSays(onShard0, "hello shard 0", { mentionBot: true })
      const answered = (channel: FakeChannel) => () => /answered with key-\w$/.test(fake.botMessages(channel.id)[0]?.content ?? "")
      yield* waitUntil(fake, "host A's answer", answered(onShard0), 30_000)
      assert.strictEqual(fake.botMessages(onShard0.id)[0]?.content, "answered with key-b", "key-a got a 429, key-b answered")
      const afterA = llm.requests.length
      assert.deepStrictEqual(llm.requests.map((request) => request.headers["authorization"]), ["Bearer key-a", "Bearer key-b"])
      yield* awaitOutput(hostA, /API key #0 rests for 1m after a rate_limit/)

      // Host B reads the shared rests every 2 s.
      yield* Effect.sleep(Duration.seconds(4))
      fake.userSays(onShard1, "hello shard 1", { mentionBot: true })
      yield* waitUntil(fake, "host B's answer", answered(onShard1), 30_000)
      assert.deepStrictEqual(
        llm.requests.slice(afterA).map((request) => request.headers["authorization"]),
        ["Bearer key-b"],
        "host B skipped key-a: it rests on every host"
      )
      assert.strictEqual(fake.botMessages(onShard1.id)[0]?.content, "answered with key-b")
      assert.notMatch(hostA.output() + hostB.output(), /overlap/)

      assert.strictEqual(yield* stopBotProcess(hostA), 0, hostA.output())
      assert.strictEqual(yield* stopBotProcess(hostB), 0, hostB.output())
    }), { timeout: 180_000 })
})
