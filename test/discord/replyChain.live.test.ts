import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { reply } from "../../src/provider/scripted/Script"
import type { FakeDiscord, StoredMessage } from "../support/fakeDiscord"
import { awaitBotMessages, botHarness } from "./botHarness"

/**
 * Reply chains (llmcord's headline feature): a reply to a message outside the recent history
 * brings that message and its chain into the context, at most DISCORD_REPLY_CHAIN_MAX of them,
 * the fetches bounded in time. Real discord.js client, fake Discord.
 */

/** `depth` messages, each replying to the one before, posted before the bot connected; then `chatter` unrelated ones. */
const seedChain = (fake: FakeDiscord, depth: number, chatter: number): ReadonlyArray<StoredMessage> => {
  const chain: Array<StoredMessage> = []
  for (let index = 1; index <= depth; index++) {
    chain.push(fake.seedMessage(fake.channel, `link ${index}`, { author: fake.user(index % 2 === 0 ? "bob" : "carol"), ...(index === 1 ? {} : { replyTo: chain[index - 2]?.id ?? "" }) }))
  }
  for (let index = 1; index <= chatter; index++) fake.seedMessage(fake.channel, `chatter ${index}`, { author: fake.user("dave") })
  return chain
}

/** Single-message fetches the bot made (`GET /channels/:id/messages/:id`). */
const singleFetches = (fake: FakeDiscord) => fake.requestsTo("GET", /^\/channels\/\d+\/messages\/\d+$/)

describe("reply chains beyond the recent history", () => {
  it.live("a 1,000-deep chain: the message replied to and its chain join the context, 10 at most, with 10 fetches at most", () =>
    Effect.gen(function*() {
      let chain: ReadonlyArray<StoredMessage> = []
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), beforeLogin: (fake) => (chain = seedChain(fake, 1000, 30)) })
      fake.userSays(fake.channel, "what was the thread about?", { mentionBot: true, replyTo: chain.at(-1)?.id ?? "" })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer")
      const [request] = yield* probe.requests
      // Each message's own text (the reply annotation that quotes its parent left out).
      const contents = request?.messages.map((message) => message.content.split("\n").at(-1)) ?? []
      const expected = Array.from({ length: 10 }, (_, index) => `link ${991 + index}`)
      assert.deepStrictEqual(contents.slice(0, 10), expected, "the chain, oldest first, before the recent history")
      assert.isFalse(contents.some((content) => content === "link 990"))
      assert.isTrue(contents.some((content) => content === "chatter 30"), "the recent history is still there")
      assert.isAtMost(singleFetches(fake).length, 10)
      assert.isAtLeast(singleFetches(fake).length, 1)
    }), 30_000)

  it.live("a reply to a message the history holds fetches nothing; DISCORD_REPLY_CHAIN_MAX=0 fetches nothing", () =>
    Effect.gen(function*() {
      let recent: StoredMessage | undefined
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), beforeLogin: (fake) => (recent = fake.seedMessage(fake.channel, "a recent message", { author: fake.user("bob") })) })
      fake.userSays(fake.channel, "about that", { mentionBot: true, replyTo: recent?.id ?? "" })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer")
      assert.lengthOf(singleFetches(fake), 0)
      assert.isTrue((yield* probe.requests)[0]?.messages.some((message) => message.content === "a recent message"))

      let chain: ReadonlyArray<StoredMessage> = []
      const off = yield* botHarness({ script: () => reply("ok"), serverControls: { replyChainMax: 0 }, beforeLogin: (fake) => (chain = seedChain(fake, 3, 25)) })
      off.fake.userSays(off.fake.channel, "and this?", { mentionBot: true, replyTo: chain.at(-1)?.id ?? "" })
      yield* awaitBotMessages(off.fake, off.fake.channel.id, 1, "the answer without a chain")
      assert.lengthOf(singleFetches(off.fake), 0)
    }), 30_000)

  it.live("a fetch that never answers cuts the chain at the time budget: the turn goes on with what was fetched", () =>
    Effect.gen(function*() {
      let chain: ReadonlyArray<StoredMessage> = []
      const { fake, probe } = yield* botHarness({ script: () => reply("ok"), front: { replyChainBudget: "400 millis" }, beforeLogin: (fake) => (chain = seedChain(fake, 5, 25)) })
      // No single message comes back: the trigger brings link 5 along (Discord sends the message it
      // replies to with it), and the fetch of link 4 stalls.
      fake.failNext({ method: "GET", path: /^\/channels\/\d+\/messages\/\d+$/, status: 0, hang: true, times: 100 })
      // Without the budget the turn would wait for discord.js's own 15 s request timeout: the 5 s wait below would fail.
      fake.userSays(fake.channel, "the whole story?", { mentionBot: true, replyTo: chain.at(-1)?.id ?? "" })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer after the budget")
      const contents = (yield* probe.requests)[0]?.messages.map((message) => message.content.split("\n").at(-1)) ?? []
      assert.deepStrictEqual(contents.slice(0, 2), ["link 5", "chatter 7"])
      assert.isAtLeast(singleFetches(fake).length, 1, "the stalled fetch was made")
    }), 30_000)
})
