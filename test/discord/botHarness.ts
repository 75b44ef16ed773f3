import { Effect, Layer } from "effect"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { TurnRunner } from "../../src/chat/TurnRunner"
import { CredentialConfig, type CredentialSettings } from "../../src/config/CredentialConfig"
import { DiscordConfig } from "../../src/config/DiscordConfig"
import { DraftingConfig, type DraftingSettings } from "../../src/config/DraftingConfig"
import { LoopConfig, type LoopSettings } from "../../src/config/LoopConfig"
import { ModelChoiceConfig } from "../../src/config/ModelChoiceConfig"
import { ServerSettingsConfig, type ServerControlSettings } from "../../src/config/ServerSettingsConfig"
import { DiscordBot, DiscordServices } from "../../src/discord/DiscordBot"
import { DiscordCredentialRoutes } from "../../src/discord/DiscordCredentials"
import { DiscordToolApprovals } from "../../src/discord/DiscordToolApprovals"
import type { DiscordFrontOptions } from "../../src/discord/DiscordTurnInput"
import { KeyPool } from "../../src/loop/KeyPool"
import { PendingContextStash } from "../../src/loop/PendingContextStash"
import { RoutePlan } from "../../src/loop/RoutePlan"
import type { LanguageModel } from "../../src/provider/LanguageModel"
import type { Script } from "../../src/provider/scripted/Script"
import { reasoningTagsLayer } from "../../src/provider/reasoningTags"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { ScriptedProbe } from "../../src/provider/scripted/ScriptedProbe"
import type { VisionConfig } from "../../src/config/VisionConfig"
import type { ImageLoader } from "../../src/media/ImageLoader"
import type { MediaLibrary } from "../../src/media/MediaLibrary"
import type { MessageImages } from "../../src/media/MessageImages"
import * as VisionGate from "../../src/media/VisionGate"
import type { DatabaseError } from "../../src/store/Database"
import { ServerTurnAdmissionStore } from "../../src/store/ServerTurnAdmissionStore"
import * as Stores from "../../src/store/Stores"
import { UsageLedgerStore } from "../../src/store/UsageLedgerStore"
import { shortTermMemoryContext } from "../../src/tools/builtin/memory/shortTermMemoryContext"
import { makeUpdateShortTermMemoryTool } from "../../src/tools/builtin/memory/UpdateShortTermMemoryTool"
import { DeliberateToolPlanner } from "../../src/tools/deliberate/DeliberateToolPlanner"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import * as InMemoryToolAffordances from "../../src/tools/InMemoryToolAffordances"
import type { Tool } from "../../src/tools/Tool"
import { registerAll, ToolRegistry } from "../../src/tools/ToolRegistry"
import { ToolUsageStats } from "../../src/tools/ToolUsageStats"
import { guildMcpLayer, type GuildMcpTestOptions } from "../support/mcpServers/mcpTestKit"
import { fakeDiscord, type FakeDiscordOptions, waitUntil } from "../support/fakeDiscord"
import type { FakeDiscord } from "../support/fakeDiscord"

export interface BotHarnessOptions {
  readonly script: Script
  readonly tools?: ReadonlyArray<Tool>
  readonly loop?: Partial<LoopSettings>
  readonly fake?: FakeDiscordOptions
  /** World building before the client logs in: messages seeded here were posted while the bot was away. */
  readonly beforeLogin?: (fake: FakeDiscord) => void
  readonly personaName?: string
  readonly front?: DiscordFrontOptions
  /** Create a `#thought-log` channel and set THOUGHT_LOG_CHANNEL_ID to it. */
  readonly thoughtLogChannel?: boolean
  /** The stores (default: a fresh in-memory SQLite database); a function gets the fake (its guild ids). */
  readonly stores?: Layer.Layer<Stores.Stores, DatabaseError> | ((fake: FakeDiscord) => Layer.Layer<Stores.Stores, DatabaseError>)
  /** Short-term memory as `main` wires it: `update_short_term_memory` registered, the memory in the context. */
  readonly shortTermMemory?: boolean
  /** DISCORD_MAX_MESSAGES_PER_TURN (default 10). */
  readonly maxMessagesPerTurn?: number
  /** The guild MCP stack behind `/mcp` (default: `guildMcpLayer()`, private networks allowed). */
  readonly guildMcp?: GuildMcpTestOptions
  /** A real provider instead of the scripted one (the script's probe then records nothing). */
  readonly model?: Layer.Layer<LanguageModel>
  /** Models and operator keys (`LLM_MODELS`, `LLM_API_KEYS`; default: `model-a`, keyless). */
  readonly routePlan?: { readonly models: ReadonlyArray<string>; readonly keys?: ReadonlyArray<string> }
  /** `LLM_MODELS_ALLOWED` (default: only the route plan's models). */
  readonly allowedModels?: ReadonlyArray<string> | "*"
  /** TOOL_APPROVAL_TIMEOUT_MS, DISCORD_REPLY_CHAIN_MAX, DISCORD_ALLOW_DMS (default: their defaults). */
  readonly serverControls?: Partial<ServerControlSettings>
  /** Cooldown, quotas and secret keys (default: all off). */
  readonly credentials?: Partial<CredentialSettings>
  /** Response Drafting on, with these settings (default: off, as `main` without RESPONSE_DRAFTING). */
  readonly drafting?: Partial<DraftingSettings>
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
 * MCP admin, and (`shortTermMemory`) the memory tool and context. Returns the fake, the scripted model's probe and the app's services.
 */
export const botHarness = (options: BotHarnessOptions) =>
  Effect.gen(function*() {
    const fake = yield* fakeDiscord(options.fake)
    options.beforeLogin?.(fake)
    const thoughtLogChannelId = options.thoughtLogChannel === true ? fake.addChannel({ kind: "text", name: "thought-log" }).id : undefined
    const config = DiscordConfig.make({
      token: fake.token,
      apiBaseUrl: fake.apiBase,
      thoughtLogChannelId,
      ...(options.maxMessagesPerTurn === undefined ? {} : { maxMessagesPerTurn: options.maxMessagesPerTurn }),
      ...(options.personaName === undefined
        ? {}
        : { personaWebhooks: true, persona: { id: undefined, name: options.personaName, avatarUrl: undefined, systemPrompt: "You are a persona." } })
    })
    const discord = DiscordServices.pipe(Layer.provide(config))
    // One layer value, so every use below shares one database.
    const stores = typeof options.stores === "function" ? options.stores(fake) : options.stores ?? Stores.layerMemory
    const memoryTools = options.shortTermMemory === true ? Effect.map(makeUpdateShortTermMemoryTool(), (tool) => [tool]) : Effect.succeed([])
    const registry = Layer.effect(
      ToolRegistry,
      Effect.gen(function*() {
        const made = yield* Effect.provide(ToolRegistry, ToolRegistry.layer)
        const fromFront = options.frontTools === undefined ? [] : yield* options.frontTools
        yield* Effect.orDie(registerAll(made, [...(options.tools ?? []), ...(yield* memoryTools), ...fromFront]))
        return made
      })
    ).pipe(Layer.provide(Layer.merge(GuildToolSource.none, discord)), Layer.provide(stores))
    const enricher = options.shortTermMemory === true ? shortTermMemoryContext.pipe(Layer.provide(stores)) : Layer.empty
    // As main wires every provider: reasoning written into the text is taken out as it streams.
    const scriptedModel = Scripted.layer({ script: options.script })
    // The right side wins: its LanguageModel is the wrapped one; the probe is the same model's (memoized).
    const scripted = Layer.merge(scriptedModel, reasoningTagsLayer(scriptedModel))
    // With media, the turns talk to the vision gate over the scripted model (the probe is the same model's, memoized).
    const gated = options.media === undefined
      ? Layer.empty
      : VisionGate.layer.pipe(Layer.provide(Layer.merge(scripted, options.media)))
    const core = Layer.mergeAll(
      scripted,
      // Provided after the scripted model, so it is the LanguageModel the turns use.
      options.model ?? gated,
      registry,
      LoopConfig.make(options.loop),
      InMemoryToolAffordances.layer,
      ToolUsageStats.none,
      PendingContextStash.Default,
      RoutePlan.make(options.routePlan?.models ?? ["model-a"], options.routePlan?.keys ?? []),
      ModelChoiceConfig.make(options.routePlan?.models ?? ["model-a"], options.allowedModels ?? []),
      ServerSettingsConfig.make(options.serverControls),
      KeyPool.Default,
      options.drafting === undefined ? Layer.empty : DraftingConfig.make(options.drafting)
    )
    const credentialConfig = CredentialConfig.make(options.credentials)
    // Who pays for a turn, as main wires it: keys from the stores, admission, the usage ledger.
    const credentials = Layer.mergeAll(DiscordCredentialRoutes, ServerTurnAdmissionStore.admissionLayer, UsageLedgerStore.ledgerLayer).pipe(
      Layer.provide(Layer.mergeAll(stores, credentialConfig, discord))
    )
    // Tool approvals as main wires them: the server's /approvals rules, buttons in the channel.
    const approvals = DiscordToolApprovals.pipe(Layer.provide(Layer.mergeAll(discord, stores, ServerSettingsConfig.make(options.serverControls))))
    const queue = ChannelQueue.Default.pipe(Layer.provide(TurnRunner.Default), Layer.provide(Layer.mergeAll(core, discord, enricher, credentials, approvals)))
    const mcp = guildMcpLayer(options.guildMcp).layer
    const planner = DeliberateToolPlanner.layer.pipe(Layer.provide(Layer.mergeAll(stores, core, GuildToolSource.none)))
    const bot = DiscordBot.layerWith({ minEditInterval: "50 millis", typingRefresh: "200 millis", ...options.front }).pipe(
      Layer.provide(Layer.mergeAll(queue, stores, mcp, core, discord, config, credentialConfig, planner))
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
