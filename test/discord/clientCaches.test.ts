import { assert, describe, it } from "@effect/vitest"
import { ChannelType, type TextChannel } from "discord.js"
import { Effect, Layer } from "effect"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { DiscordClient } from "../../src/discord/DiscordClient"
import { isMaterialized } from "../../src/discord/lazyCollection"
import { channelPayload, fakeDiscord, waitUntil } from "../support/fakeDiscord"

describe("the client's caches", () => {
  it.live("a guild's empty caches make no collection; messages, threads, roles and members are still cached, and discord.js's own bookkeeping works", () =>
    Effect.gen(function*() {
      const fake = yield* fakeDiscord()
      const other = fake.addGuild("other", [], undefined, undefined, { roles: 3, emojis: 4, members: 5 })
      const [first, second] = [0, 1].map((index) => fake.addChannel({ kind: "text", name: `c-${index}`, guildId: other.id }))
      const layer = DiscordClient.layer.pipe(Layer.provide(DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase })))
      const client = yield* Effect.provide(DiscordClient, yield* Layer.build(layer))
      const guild = client.guilds.cache.get(other.id)
      assert.isDefined(guild)
      const textChannel = (id: string) => client.channels.cache.get(id) as TextChannel
      for (const channel of [textChannel(first!.id), textChannel(second!.id)]) {
        assert.strictEqual(channel.type, ChannelType.GuildText)
        assert.isFalse(isMaterialized(channel.messages.cache), "no message yet")
        assert.isFalse(isMaterialized(channel.threads.cache), "no thread")
        assert.isFalse(isMaterialized(channel.permissionOverwrites.cache), "no overwrite")
      }
      // The caches that keep nothing are one collection for every guild.
      assert.strictEqual(guild!.emojis.cache.size, 0)
      assert.strictEqual(guild!.emojis.cache, client.guilds.cache.get(fake.guild.id)?.emojis.cache)
      assert.isAtLeast(guild!.roles.cache.size, 3)
      assert.isTrue(guild!.members.cache.has(client.user.id), "the bot's own member")

      fake.userSays(first!, "hello")
      yield* waitUntil(fake, "the message cached", () => textChannel(first!.id).messages.cache.size === 1)
      assert.strictEqual(textChannel(first!.id).messages.cache.first()?.content, "hello")
      assert.isFalse(isMaterialized(textChannel(second!.id).messages.cache), "the other channel still holds nothing")

      const thread = fake.addThread(first!, "a thread")
      yield* waitUntil(fake, "the thread cached", () => client.channels.cache.has(thread.id))
      assert.isTrue(textChannel(first!.id).threads.cache.has(thread.id), "in its parent's threads")
      // discord.js removes a deleted channel's threads through its parent's thread cache.
      fake.dispatch("CHANNEL_DELETE", channelPayload(first!), other.id)
      yield* waitUntil(fake, "the channel and its thread gone", () => !client.channels.cache.has(first!.id))
      assert.isFalse(client.channels.cache.has(thread.id))
      assert.isFalse(guild!.channels.cache.has(thread.id))
    }))
})
