import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { DiscordClient } from "../../src/discord/DiscordClient"
import { MESSAGES_PER_CHANNEL } from "../../src/discord/clientCaches"
import { HISTORY_LIMIT } from "../../src/discord/history"
import { reply } from "../../src/provider/scripted/Script"
import { snowflake } from "../support/fakeDiscord/payloads"
import { mediaServices } from "../support/fakeMedia/mediaToolKit"
import { awaitBotMessages, botHarness } from "./botHarness"

const MB = 1024 * 1024

/**
 * Hostile or broken Discord input: the channel keeps answering, and what one message can make
 * the bot hold stays bounded.
 */
describe("hostile Discord input (real discord.js, fake Discord)", () => {
  it.live("[issue 25] message events with missing fields are dropped; the next mention is answered", () =>
    Effect.gen(function*() {
      const { fake } = yield* botHarness({ script: () => reply("still here") })
      const guild = fake.guild.id
      const channel = fake.channel.id
      // No author, no content, no timestamp; a wrong type where an object belongs; no channel.
      fake.dispatch("MESSAGE_CREATE", { id: snowflake(), channel_id: channel, guild_id: guild }, guild)
      fake.dispatch("MESSAGE_CREATE", { id: snowflake(), channel_id: channel, guild_id: guild, author: "nobody", content: 42, mentions: null }, guild)
      fake.dispatch("MESSAGE_CREATE", { id: snowflake(), guild_id: guild, content: `<@${fake.bot.id}> hi` }, guild)
      fake.dispatch("MESSAGE_CREATE", { id: snowflake(), channel_id: "1", content: `<@${fake.bot.id}> hi`, author: { id: "5", username: "x" } }, guild)
      fake.userSays(fake.channel, "are you there?", { mentionBot: true })
      yield* awaitBotMessages(fake, channel, 1, "the answer", ([content]) => content === "still here")
      assert.strictEqual(fake.botMessages(channel).length, 1, "only the well-formed mention was answered")
    }))

  it.live("[issue 25] a 4,000-character message with 10 embeds is answered; the model sees its text and at most 10 images as placeholders", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({ script: () => reply("read it"), media: mediaServices({ vision: { visionModels: [] } }) })
      const embeds = Array.from({ length: 10 }, (_, i) => ({
        type: "rich",
        title: "t".repeat(256),
        description: "d".repeat(4096),
        fields: Array.from({ length: 25 }, (_, f) => ({ name: `field ${f}`, value: "v".repeat(1024) })),
        image: { url: `https://example.invalid/${i}.png`, proxy_url: `${fake.mediaProxyBase}/external/${i}.png`, width: 64, height: 64 }
      }))
      const text = "x".repeat(3990)
      fake.userSays(fake.channel, text, { mentionBot: true, embeds })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer", ([content]) => content === "read it")
      const last = (yield* probe.requests)[0]?.messages.at(-1)
      assert.include(last?.content ?? "", text)
      assert.isAtMost((last?.content ?? "").length, 4000 + 10 * 200, "the text and one placeholder line per image, no embed bodies")
      assert.notInclude(last?.content ?? "", "d".repeat(100), "embed descriptions are not pasted into the context")
      assert.strictEqual(fake.cdnRequests.length, 0, "a model without vision downloads nothing")
    }))

  it.live("[issue 25] 10 attachments of 25 MB: none is downloaded (over VISION_MAX_IMAGE_MB by their size), the turn is answered", () =>
    Effect.gen(function*() {
      const { fake, probe } = yield* botHarness({
        script: () => reply("too big to look at"),
        media: mediaServices({ vision: { visionModels: ["model-a"], maxImageBytes: 20 * MB } })
      })
      const attachments = Array.from({ length: 10 }, (_, i) => ({
        url: `${fake.mediaProxyBase.replace("/media-proxy", "")}/attachments/${fake.channel.id}/${i}/huge-${i}.png`,
        contentType: "image/png",
        filename: `huge-${i}.png`,
        size: 25 * MB
      }))
      fake.userSays(fake.channel, "look at these", { mentionBot: true, attachments })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer", ([content]) => content === "too big to look at")
      assert.strictEqual(fake.cdnRequests.length, 0, "no download of a file Discord says is over the cap")
      const last = (yield* probe.requests)[0]?.messages.at(-1)
      assert.isUndefined(last?.images, "no image bytes go to the model")
      // Each of the 10 is named to the model as an image it does not see (over the cap, or past the per-request image budget).
      assert.strictEqual((last?.content.match(/\[image media_id=/g) ?? []).length, 10)
      assert.isAtLeast((last?.content.match(/larger than 20 MB/g) ?? []).length, 1)
    }))

  it.live("[issue 25] a reply chain 1,000 messages deep: the turn reads at most its history window, the cache stays bounded", () =>
    Effect.gen(function*() {
      const { fake, probe, context } = yield* botHarness({ script: () => reply("end of the chain") })
      const bob = fake.user("bob")
      let previous: string | undefined
      for (let i = 0; i < 1000; i++) {
        previous = fake.userSays(fake.channel, `link ${i}`, { author: i % 2 === 0 ? bob : fake.user("alice"), ...(previous === undefined ? {} : { replyTo: previous }) }).id
      }
      fake.userSays(fake.channel, "what started this?", { mentionBot: true, ...(previous === undefined ? {} : { replyTo: previous }) })
      yield* awaitBotMessages(fake, fake.channel.id, 1, "the answer", ([content]) => content === "end of the chain", 15_000)
      const messages = (yield* probe.requests)[0]?.messages ?? []
      // The history window and the trigger; the chain is not walked (reply-chain context is
      // bounded by DISCORD_REPLY_CHAIN_MAX where it exists).
      assert.isAtMost(messages.filter((message) => message.role !== "system").length, HISTORY_LIMIT + 1)
      assert.strictEqual(messages.at(-1)?.content, '[replying to alice: "link 999"]\nwhat started this?')
      assert.isAtMost(fake.requestsTo("GET", /^\/channels\/\d+\/messages/).length, 1, "at most one history read, no walk up the chain")
      const client = yield* Effect.provide(DiscordClient, context)
      const cached = client.channels.cache.get(fake.channel.id)
      assert.isAtMost(cached !== undefined && cached.isTextBased() ? cached.messages.cache.size : Infinity, MESSAGES_PER_CHANNEL)
    }), { timeout: 30_000 })
})
