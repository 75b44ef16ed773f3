/**
 * How the application is put together (design §4): every Layer the fronts need, wired once.
 * `main.ts` picks a front and runs it; nothing here runs an effect.
 *
 *   front ─► ChannelQueue ─► TurnRunner ─► runGenerationTurn ─► runToolLoop ─► LanguageModel
 *                                                              └► ToolRegistry ─► built-ins, MCP
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { type ConfigError, Effect, Layer, Option } from "effect"
import { ChannelQueue } from "./chat/ChannelQueue"
import { TurnRunner } from "./chat/TurnRunner"
import { ChatConfig } from "./config/ChatConfig"
import { CredentialConfig } from "./config/CredentialConfig"
import { DiscordConfig } from "./config/DiscordConfig"
import { DraftingConfig } from "./config/DraftingConfig"
import { FetchConfig } from "./config/FetchConfig"
import { ImageConfig } from "./config/ImageConfig"
import { LoopConfig } from "./config/LoopConfig"
import { McpConfig } from "./config/McpConfig"
import { ProviderConfig, type ProviderKind, routePlanLayer } from "./config/ProviderConfig"
import { SearchConfig } from "./config/SearchConfig"
import { SpeechConfig } from "./config/SpeechConfig"
import { StoreConfig } from "./config/StoreConfig"
import { VisionConfig } from "./config/VisionConfig"
import { DiscordBot, DiscordServices } from "./discord/DiscordBot"
import type { DiscordClient } from "./discord/DiscordClient"
import { DiscordCredentialRoutes } from "./discord/DiscordCredentials"
import { AddressPolicy } from "./fetch/AddressPolicy"
import { DnsResolver } from "./fetch/DnsResolver"
import { SafeHttp } from "./fetch/SafeHttp"
import { SocketConnector } from "./fetch/SocketConnector"
import { KeyPool } from "./loop/KeyPool"
import { SharedKeyCooldowns } from "./loop/SharedKeyCooldowns"
import { ImageLoader } from "./media/ImageLoader"
import { MediaLibrary } from "./media/MediaLibrary"
import { MessageImages } from "./media/MessageImages"
import * as VisionGate from "./media/VisionGate"
import { PendingContextStash } from "./loop/PendingContextStash"
import { ThoughtLog } from "./loop/ThoughtLog"
import { GuildMcpAddressPolicy } from "./mcp/GuildMcpAddressPolicy"
import { GlobalMcpConnections, GlobalMcpServersLive, GuildMcpLive, GuildToolSourceLive } from "./mcp/McpLive"
import { markStarted } from "./ops/botReadiness"
import { discordOpsFoundation, discordOpsLayer } from "./ops/DiscordOps"
import { instrumentedModelLayer } from "./ops/instrumentedModel"
import { instrumentToolRegistry } from "./ops/instrumentedTools"
import { layerConfigFor } from "./provider/httpProviders"
import type { LanguageModel } from "./provider/LanguageModel"
import { providerHttpClient } from "./provider/providerHttpClient"
import * as Scripted from "./provider/scripted/ScriptedModel"
import * as Database from "./store/Database"
import * as KeyCooldownStore from "./store/KeyCooldownStore"
import { ServerTurnAdmissionStore } from "./store/ServerTurnAdmissionStore"
import * as Stores from "./store/Stores"
import { UsageLedgerStore } from "./store/UsageLedgerStore"
import { BlockTargetResolver } from "./tools/builtin/blocking/BlockTargetResolver"
import { makeBlockUserTool } from "./tools/builtin/blocking/BlockUserTool"
import { makeUnblockUserTool } from "./tools/builtin/blocking/UnblockUserTool"
import { fetchUrlTool } from "./tools/builtin/fetchUrl/FetchUrlTool"
import { mediaTools } from "./tools/builtin/media/mediaTools"
import { shortTermMemoryContext } from "./tools/builtin/memory/shortTermMemoryContext"
import { makeUpdateShortTermMemoryTool } from "./tools/builtin/memory/UpdateShortTermMemoryTool"
import { makeSelectStickerTool } from "./tools/builtin/stickers/SelectStickerTool"
import { webSearchTool } from "./tools/builtin/webSearch/WebSearchTool"
import { DeliberateToolPlanner } from "./tools/deliberate/DeliberateToolPlanner"
import * as InMemoryToolAffordances from "./tools/InMemoryToolAffordances"
import { StickerCatalog } from "./tools/StickerCatalog"
import { make as makeToolRegistry, registerAll, ToolRegistry } from "./tools/ToolRegistry"

/**
 * Every setting the app reads, checked before anything starts (a database opens, a server
 * connects, a log line is written), so a bad value is the one line start-up prints.
 */
export const checkSettings = (front: "terminal" | "discord") =>
  Effect.scoped(Layer.build(Layer.mergeAll(
    LoopConfig.layer,
    ChatConfig.layer,
    ProviderConfig.layer,
    StoreConfig.layer,
    CredentialConfig.layer,
    FetchConfig.layer,
    SearchConfig.layer,
    McpConfig.layer,
    DraftingConfig.layer,
    ImageConfig.layer,
    SpeechConfig.layer,
    VisionConfig.layer,
    front === "discord" ? DiscordConfig.layer : Layer.empty
  )))

/**
 * The model for LLM_PROVIDER; HTTP providers talk through undici, at most 256 sockets per origin.
 * Passes get spans and provider errors get counted when telemetry is on (ops/instrumentedModel).
 */
export const providerLayer = (kind: ProviderKind): Layer.Layer<LanguageModel, ConfigError.ConfigError> =>
  instrumentedModelLayer(
    kind === "scripted"
      ? Scripted.layerConfig.pipe(Layer.provide(NodeFileSystem.layer))
      : layerConfigFor(kind).pipe(Layer.provide(providerHttpClient()))
  )

/** Every store over DATABASE_URL (SQLite by default), migrated once at start-up. */
export const storesLive = Stores.layerConfig.pipe(Layer.provide(Layer.merge(StoreConfig.layer, CredentialConfig.layer)))

/** The database the stores use (the same instance: layers are shared within one build), for health checks and leases. */
const databaseLive = Database.layerConfig.pipe(Layer.provide(StoreConfig.layer))

/** API-key rests shared through the database when it is PostgreSQL (several hosts of one bot); else in memory. */
const sharedKeyCooldownsLive = Layer.unwrapEffect(
  Effect.map(StoreConfig, ({ database }) =>
    database._tag === "Postgres"
      ? KeyCooldownStore.layer.pipe(Layer.provide(Layer.merge(databaseLive, routePlanLayer.pipe(Layer.provide(ProviderConfig.layer)))))
      : Layer.succeed(SharedKeyCooldowns, Option.none()))
).pipe(Layer.provide(StoreConfig.layer))

/** fetch_url's URL policy and the pinned connector (guild MCP uses the connector too). */
const outboundNetwork = Layer.merge(AddressPolicy.layerSystem, SocketConnector.system)

/** Guild MCP's own URL policy (design decision 13): GUILD_MCP_ALLOW_PRIVATE_NETWORK only. */
const guildMcpAddressPolicy = GuildMcpAddressPolicy.layer.pipe(Layer.provide(Layer.merge(McpConfig.layer, DnsResolver.system)))

/** safe_http and what fetch_url reads besides it. */
const fetchLive = SafeHttp.Default.pipe(Layer.provideMerge(Layer.merge(FetchConfig.layer, outboundNetwork)))

/**
 * Media (issue 13): the library of opaque media ids and the image loader (safe_http with the
 * VISION_MAX_IMAGE_MB cap), one instance shared by the registry, the vision gate, the media tools
 * and the fronts.
 */
export const mediaLive = ImageLoader.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(MediaLibrary.Default, VisionConfig.layer)),
  Layer.provide(fetchLive)
)

/** The model a turn talks to: the provider's, behind the vision gate (images only for LLM_VISION_MODELS). */
const turnModel = (model: Layer.Layer<LanguageModel, ConfigError.ConfigError>) =>
  VisionGate.layer.pipe(Layer.provide(Layer.merge(model, mediaLive)))

/** Guild MCP: the pool with its breaker, the guild tool source's backing service, the admin. */
export const guildMcpLive = GuildMcpLive.pipe(
  Layer.provide(Layer.mergeAll(McpConfig.layer, outboundNetwork, guildMcpAddressPolicy, storesLive))
)

/** Guild MCP tools for the registry (per turn, after the exposure rules). */
const guildToolSourceLive = GuildToolSourceLive.pipe(Layer.provide(guildMcpLive))

/** Services that differ by front: where hidden notices go, the sticker catalog, who can be blocked, message lookups. */
export type FrontServices = ThoughtLog | StickerCatalog | BlockTargetResolver | MessageImages

/** The terminal has no guild: notices are logged, no stickers, nobody to block, no messages to look up. */
export const terminalFrontServices: Layer.Layer<FrontServices> = Layer.mergeAll(
  ThoughtLog.logged,
  StickerCatalog.none,
  BlockTargetResolver.fromMembers({}),
  MessageImages.none
)

/** Every built-in tool, registered at start-up; guild MCP tools come per turn from the guild source. */
const builtinTools = Effect.all([
  fetchUrlTool,
  webSearchTool,
  makeUpdateShortTermMemoryTool(),
  makeSelectStickerTool,
  makeBlockUserTool,
  makeUnblockUserTool
])

/** The registry with every built-in; media tools over the provider's own model (analyze_image), media ids resolved. */
const toolRegistryLive = (model: Layer.Layer<LanguageModel, ConfigError.ConfigError>) =>
  Layer.scoped(
    ToolRegistry,
    Effect.gen(function*() {
      const registry = yield* makeToolRegistry
      yield* Effect.orDie(registerAll(registry, [...(yield* builtinTools), ...(yield* mediaTools)]))
      // Tool calls get spans when telemetry is on (ops/instrumentedTools).
      return yield* instrumentToolRegistry(registry)
    })
  ).pipe(
    Layer.provide(Layer.mergeAll(
      guildToolSourceLive,
      fetchLive,
      SearchConfig.layer,
      storesLive,
      mediaLive,
      MediaLibrary.opaqueIds.pipe(Layer.provide(mediaLive)),
      model,
      ImageConfig.layer,
      SpeechConfig.layer,
      ProviderConfig.layer,
      // Media backends get their own client: a slow image job never holds a model socket.
      NodeHttpClient.layerUndici
    ))
  )

/** The registry with built-ins, plus global MCP servers (built once their first connect attempts ended, decision 14). */
const toolsLive = (model: Layer.Layer<LanguageModel, ConfigError.ConfigError>) => {
  const registry = toolRegistryLive(model)
  return Layer.merge(registry, GlobalMcpServersLive.pipe(Layer.provide(Layer.merge(registry, McpConfig.layer))))
}

/** Everything a turn needs besides what the front provides per turn (sink, signals, turn facts). */
export const turnServices = <E, R>(kind: ProviderKind, front: Layer.Layer<FrontServices, E, R>) => {
  // One provider layer: the turn's model and analyze_image share its connection pool.
  const model = providerLayer(kind)
  return Layer.mergeAll(
    turnModel(model),
    toolsLive(model).pipe(Layer.provide(front)),
    front,
    mediaLive,
    LoopConfig.layer,
    DraftingConfig.layer,
    InMemoryToolAffordances.layer,
    storesLive,
    shortTermMemoryContext.pipe(Layer.provide(storesLive)),
    PendingContextStash.Default,
    routePlanLayer.pipe(Layer.provide(ProviderConfig.layer)),
    KeyPool.Default.pipe(Layer.provide(sharedKeyCooldownsLive))
  )
}

/** The ChannelQueue over the turn services (what every front submits messages to). */
export const chatLayer = <E, R>(kind: ProviderKind, front: Layer.Layer<FrontServices, E, R>) =>
  ChannelQueue.Default.pipe(
    Layer.provide(Layer.merge(TurnRunner.Default, ChatConfig.layer)),
    Layer.provideMerge(turnServices(kind, front))
  )

/**
 * Who pays for a Discord turn (issue 17): personal and server keys from the stores (problems told
 * by DM), admission of server-paid turns, the usage ledger. The terminal keeps the operator's pool.
 */
const discordCredentialsLive = <E, R>(discord: Layer.Layer<DiscordClient, E, R>) =>
  Layer.mergeAll(
    DiscordCredentialRoutes,
    ServerTurnAdmissionStore.admissionLayer,
    UsageLedgerStore.ledgerLayer
  ).pipe(Layer.provide(Layer.mergeAll(storesLive, CredentialConfig.layer, discord)))

/**
 * The Discord bot (DISCORD_TOKEN set): logs in, registers commands, answers until stopped. Its
 * operations (src/ops/DiscordOps): the health server starts first; readiness checks and the
 * graceful drain (SIGTERM lets running replies finish) sit beside the bot.
 */
export const discordBotLayer = (kind: ProviderKind) => {
  // The bot logs in once the global MCP servers had their start-up wait (decision 14): the
  // first message is answered with their tools, and none arrives while nobody listens yet.
  const discord = DiscordServices.pipe(Layer.provide(Layer.merge(DiscordConfig.layer, GlobalMcpConnections.layer.pipe(Layer.provide(McpConfig.layer)))))
  const chat = chatLayer(kind, Layer.merge(discord, discordCredentialsLive(discord)))
  const planner = DeliberateToolPlanner.layer.pipe(
    Layer.provide(Layer.merge(chat, guildToolSourceLive))
  )
  return DiscordBot.layer.pipe(
    Layer.merge(discordOpsLayer),
    Layer.provide(Layer.mergeAll(chat, guildMcpLive, discord, DiscordConfig.layer, CredentialConfig.layer, planner, databaseLive)),
    Layer.tap(() => markStarted),
    Layer.provide(discordOpsFoundation)
  )
}
