import { Effect, Layer } from "effect"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { TurnRunner } from "../../src/chat/TurnRunner"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { LoopConfig, type LoopSettings } from "../../src/config/LoopConfig"
import { DiscordBot, DiscordServices } from "../../src/discord/DiscordBot"
import type { DiscordFrontOptions } from "../../src/discord/DiscordTurnInput"
import { KeyPool } from "../../src/loop/KeyPool"
import { PendingContextStash } from "../../src/loop/PendingContextStash"
import { RoutePlan } from "../../src/loop/RoutePlan"
import type { Script } from "../../src/provider/scripted/Script"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import type { VisionConfig } from "../../src/config/VisionConfig"
import type { ImageLoader } from "../../src/media/ImageLoader"
import type { MediaLibrary } from "../../src/media/MediaLibrary"
import type { MessageImages } from "../../src/media/MessageImages"
import * as VisionGate from "../../src/media/VisionGate"
import type { DatabaseError } from "../../src/store/Database"
import * as Stores from "../../src/store/Stores"
import { DeliberateToolPlanner } from "../../src/tools/deliberate/DeliberateToolPlanner"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import * as InMemoryToolAffordances from "../../src/tools/InMemoryToolAffordances"
import type { Tool } from "../../src/tools/Tool"
import { registerAll, ToolRegistry } from "../../src/tools/ToolRegistry"
import { ToolUsageStats } from "../../src/tools/ToolUsageStats"
import { guildMcpLayer } from "../support/mcpServers/mcpTestKit"
import { fakeDiscord, type FakeDiscordOptions, waitUntil } from "../support/fakeDiscord"
import type { FakeDiscord } from "../support/fakeDiscord"

export interface BotHarnessOptions {
  readonly script: Script
  readonly tools?: ReadonlyArray<Tool>
  readonly loop?: Partial<LoopSettings>
  readonly fake?: FakeDiscordOptions
  readonly personaName?: string
  readonly front?: DiscordFrontOptions
  /** Create a `#thought-log` channel and set THOUGHT_LOG_CHANNEL_ID to it. */
  readonly thoughtLogChannel?: boolean
  /** The stores (default: a fresh in-memory SQLite database). */
  readonly stores?: Layer.Layer<Stores.Stores, DatabaseError>
  /** The route plan's models (default: model-a). */
  readonly models?: ReadonlyArray<string>
  /**
   * Media (issue 13): the scripted model behind the vision gate, over these media services
   * (their VisionConfig says which models see images).
   */
  readonly media?: Layer.Layer<ImageLoader | MediaLibrary | VisionConfig>
  /** Tools that need the Discord front's services (analyze_image's message lookups), built with them. */
  readonly frontTools?: Effect.Effect<ReadonlyArray<Tool>, never, MessageImages>
}

/**
 * The whole Discord bot as `main` wires it, against a fake Discord: a real discord.js client,
 * the ChannelQueue and generation turn over a scripted model, stores in in-memory SQLite, guild
 * MCP admin. Returns the fake, the scripted model's probe and the app's services.
 */
export const botHarness = (options: BotHarnessOptions) =>
  Effect.gen(function*() {
    const fake = yield* fakeDiscord(options.fake)
    const thoughtLogChannelId = options.thoughtLogChannel === true ? fake.addChannel({ kind: "text", name: "thought-log" }).id : undefined
    const config = DiscordConfig.make({
      token: fake.token,
      apiBaseUrl: fake.apiBase,
      thoughtLogChannelId,
      ...(options.personaName === undefined
        ? {}
        : { personaWebhooks: true, persona: { id: undefined, name: options.personaName, avatarUrl: undefined, systemPrompt: "You are a persona." } })
    })
    const discord = DiscordServices.pipe(Layer.provide(config))
    const registry = Layer.effect(
      ToolRegistry,
      Effect.gen(function*() {
        const made = yield* Effect.provide(ToolRegistry, ToolRegistry.layer)
        const fromFront = options.frontTools === undefined ? [] : yield* options.frontTools
        yield* Effect.orDie(registerAll(made, [...(options.tools ?? []), ...fromFront]))
        return made
      })
    ).pipe(Layer.provide(Layer.merge(GuildToolSource.none, discord)))
    const scripted = Scripted.layer({ script: options.script })
    const model = options.media === undefined
      ? scripted
      // The probe of the same scripted model (memoized), beside the gate's LanguageModel.
      : Layer.merge(
        VisionGate.layer.pipe(Layer.provide(Layer.merge(scripted, options.media))),
        Layer.effect(ScriptedProbe, ScriptedProbe).pipe(Layer.provide(scripted))
      )
    const core = Layer.mergeAll(
      model,
      registry,
      LoopConfig.make(options.loop),
      InMemoryToolAffordances.layer,
      ToolUsageStats.none,
      PendingContextStash.Default,
      RoutePlan.make(options.models ?? ["model-a"]),
      KeyPool.Default
    )
    const queue = ChannelQueue.Default.pipe(Layer.provide(TurnRunner.Default), Layer.provide(Layer.merge(core, discord)))
    const stores = options.stores ?? Stores.layerMemory
    const mcp = guildMcpLayer().layer
    const planner = DeliberateToolPlanner.layer.pipe(Layer.provide(Layer.mergeAll(stores, core, GuildToolSource.none)))
    const bot = DiscordBot.layerWith({ minEditInterval: "50 millis", typingRefresh: "200 millis", ...options.front }).pipe(
      Layer.provide(Layer.mergeAll(queue, stores, mcp, core, discord, config, planner))
    )
    const context = yield* Layer.build(Layer.mergeAll(bot, core, discord, stores))
    const probe = yield* Effect.provide(ScriptedProbe, context)
    return { fake, probe, context, thoughtLogChannelId: thoughtLogChannelId ?? "" }
  })

/** Resolves when the bot has posted `count` messages in the channel whose latest content satisfies `done`. */
export const awaitBotMessages = (fake: FakeDiscord, channelId: string, count: number, what: string, done: (contents: ReadonlyArray<string>) => boolean = () => true, timeoutMs = 5000) =>
  waitUntil(fake, what, () => {
    const contents = fake.botMessages(channelId).map((message) => message.content)
    return contents.length >= count && done(contents)
  }, timeoutMs)
