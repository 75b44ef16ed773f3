import { assert, describe, it } from "@effect/vitest"
import { Client, Events, type Message } from "discord.js"
import { Effect } from "effect"
import { CoverageAwareMessages } from "../../src/discord/clientCaches"
import { HistoryCoverageState } from "../../src/discord/HistoryCoverage"
import { trackHistoryCoverage } from "../../src/discord/historyCoverageEvents"
import { reply } from "../../src/provider/scripted/Script"
import { awaitBotMessages, botHarness } from "./botHarness"

const historyReads = (fake: { requestsTo: (method: string, path: RegExp) => ReadonlyArray<unknown> }) => fake.requestsTo("GET", /^\/channels\/\d+\/messages$/).length

describe("HistoryCoverage (pure)", () => {
  it("a read covers from its oldest message (or the start); drops move the coverage past them; a lost session forgets", () => {
    const coverage = new HistoryCoverageState(3)
    assert.isUndefined(coverage.coveredFrom("c"))
    coverage.reading("c")
    assert.isUndefined(coverage.coveredFrom("c"), "not trusted while the read is under way")
    coverage.dropped("c", "150")
    coverage.read("c", 100n)
    assert.strictEqual(coverage.coveredFrom("c"), 151n, "a message dropped during the read is not covered")
    coverage.dropped("c", "120")
    assert.strictEqual(coverage.coveredFrom("c"), 151n, "an older drop changes nothing")
    coverage.dropped("c", "200")
    assert.strictEqual(coverage.coveredFrom("c"), 201n)
    coverage.empty("d")
    assert.strictEqual(coverage.coveredFrom("d"), 0n)
    coverage.lost()
    assert.isUndefined(coverage.coveredFrom("c"))
    assert.isUndefined(coverage.coveredFrom("d"))
    for (const id of ["a", "b", "e", "f"]) coverage.empty(id)
    assert.strictEqual(coverage.size, 3, "bounded")
    assert.isUndefined(coverage.coveredFrom("a"), "the oldest is forgotten first")
  })

  it.effect("a gateway session that ends (disconnect, or a new READY) forgets the coverage", () =>
    Effect.gen(function*() {
      const client = new Client({ intents: [] })
      const coverage = new HistoryCoverageState()
      yield* trackHistoryCoverage(client, coverage)
      coverage.empty("c")
      client.emit(Events.ShardResume, 0, 3)
      assert.strictEqual(coverage.coveredFrom("c"), 0n, "a resume replays what was missed")
      client.emit(Events.ShardReady, 0, undefined)
      assert.isUndefined(coverage.coveredFrom("c"))
      coverage.empty("c")
      client.emit(Events.ShardDisconnect, new CloseEvent("close"), 0)
      assert.isUndefined(coverage.coveredFrom("c"))
    }))

  it("the message cache reports what it evicts and what it sweeps", () => {
    const dropped: Array<string> = []
    const cache = new CoverageAwareMessages((message) => dropped.push(message.id), 2)
    const message = (id: string) => ({ id, channelId: "c" }) as Message
    cache.set("1", message("1"))
    cache.set("2", message("2"))
    cache.set("2", message("2"))
    assert.deepStrictEqual(dropped, [], "updating a message evicts nothing")
    cache.set("3", message("3"))
    assert.deepStrictEqual(dropped, ["1"])
    cache.sweep((entry) => entry.id === "3")
    assert.deepStrictEqual(dropped, ["1", "3"])
    assert.deepStrictEqual([...cache.keys()], ["2"])
  })
})

describe("history from the client's cache (real discord.js, fake Discord)", () => {
  it.live("[issue 27] a channel with earlier messages is read from Discord once; later turns read the cache and still see every message", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("ok") })
      // A channel the client learns of with history it never received (its last_message_id is set).
      const seeded = fake.addChannel({ kind: "text", name: "seeded", announce: false })
      fake.userSays(seeded, "written while the bot was away")
      fake.dispatch("CHANNEL_CREATE", { id: seeded.id, type: 0, guild_id: fake.guild.id, name: seeded.name, last_message_id: seeded.lastMessageId, position: 3, permission_overwrites: [] }, fake.guild.id)
      yield* Effect.sleep("100 millis")
      fake.userSays(seeded, "first question", { mentionBot: true })
      yield* awaitBotMessages(fake, seeded.id, 1, "the first answer")
      assert.strictEqual(historyReads(fake), 1, "the first turn asks Discord")
      fake.userSays(seeded, "some chatter", { author: fake.user("bob") })
      fake.userSays(seeded, "second question", { mentionBot: true })
      yield* awaitBotMessages(fake, seeded.id, 2, "the second answer")
      assert.strictEqual(historyReads(fake), 1, "the second turn reads the cache")
      const second = (yield* probe.requests).at(-1)?.messages.map((message) => message.content) ?? []
      for (const content of ["written while the bot was away", "first question", "ok", "some chatter", "second question"]) assert.include(second, content)
    }))

  it.live("[issue 27] a channel the client saw empty at login is never read from Discord", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("ok") })
      fake.userSays(fake.channel, "hello", { mentionBot: true })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer")
      assert.strictEqual(historyReads(fake), 0, "empty at login: the cache holds all of it")
      assert.deepStrictEqual((yield* probe.requests)[0]?.messages.map((message) => message.content), ["hello"])
    }))
})
