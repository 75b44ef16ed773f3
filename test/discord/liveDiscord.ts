import type { Client, SendableChannels } from "discord.js"
import { Effect, Layer } from "effect"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { DiscordClient } from "../../src/discord/DiscordClient"
import { PersonaWebhooks } from "../../src/discord/PersonaWebhooks"
import { RateLimitGauge } from "../../src/discord/RateLimitGauge"
import { type FakeDiscord, fakeDiscord, type FakeDiscordOptions } from "../support/fakeDiscord"

/** A real discord.js client logged into a fresh fake Discord, with the delivery services, for this scope. */
export const liveDiscord = (options: FakeDiscordOptions = {}) =>
  Effect.gen(function*() {
    const fake = yield* fakeDiscord(options)
    const clientLayer = DiscordClient.layer.pipe(Layer.provide(DiscordConfig.make({ token: fake.token, apiBaseUrl: fake.apiBase })))
    const services = Layer.mergeAll(PersonaWebhooks.Default, RateLimitGauge.Default).pipe(Layer.provideMerge(clientLayer))
    const context = yield* Layer.build(services)
    const client = yield* Effect.provide(DiscordClient, context)
    const webhooks = yield* Effect.provide(PersonaWebhooks, context)
    const gauge = yield* Effect.provide(RateLimitGauge, context)
    return { fake, client, webhooks, gauge, context }
  })

/** The discord.js channel object for a fake channel. */
export const sendableChannel = (client: Client<true>, fake: FakeDiscord, channelId: string) =>
  Effect.promise(async () => {
    const channel = await client.channels.fetch(channelId)
    if (channel === null || !channel.isSendable()) throw new Error(`channel ${channelId} (${fake.getChannel(channelId).name}) is not sendable`)
    return channel satisfies SendableChannels
  })
