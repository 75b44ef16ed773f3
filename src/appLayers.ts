/**
 * How the application is put together (docs/architecture.md, Layers and what may import what):
 * every Layer the fronts need, wired once.
 * `main.ts` picks a front and runs it; nothing here runs an effect.
 *
 *   front ─► ChannelQueue ─► TurnRunner ─► runGenerationTurn ─► runToolLoop ─► LanguageModel
 *                                                              └► ToolRegistry ─► built-ins, MCP
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { type Config, Effect, Layer, Option } from "effect"
import { ChannelQueue } from "./chat/ChannelQueue"
import { TurnRunner } from "./chat/TurnRunner"
import { ChatConfig } from "./config/ChatConfig"
import { ContextConfig } from "./config/ContextConfig"
import { CredentialConfig } from "./config/CredentialConfig"
import { DiscordConfig } from "./config/DiscordConfig"
import { DraftingConfig } from "./config/DraftingConfig"
import { FetchConfig } from "./config/FetchConfig"
import { ImageConfig } from "./config/ImageConfig"
import { LoopConfig } from "./config/LoopConfig"
import { McpConfig } from "./config/McpConfig"
import { ModelChoiceConfig } from "./config/ModelChoiceConfig"
import { ProviderConfig, type ProviderKind } from "./config/ProviderConfig"
import { routePlanLayer } from "./loop/RoutePlan"
import { SearchConfig } from "./config/SearchConfig"
import { ServerSettingsConfig } from "./config/ServerSettingsConfig"
import { SpeechConfig } from "./config/SpeechConfig"
import { StoreConfig } from "./config/StoreConfig"
import { VisionConfig } from "./config/VisionConfig"
import { AddressPolicy } from "./fetch/AddressPolicy"
import { HtmlConverter } from "./fetch/html/HtmlConverter"
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
import { lazyLayer } from "./lazyLayer"
import { instrumentedModelLayer } from "./ops/instrumentedModel"
import { instrumentToolRegistry } from "./ops/instrumentedTools"
import * as ModelWindowsLive from "./provider/context/modelWindowsLive"
import type { LanguageModel } from "./provider/LanguageModel"
import { reasoningTagsLayer } from "./provider/reasoningTags"
import * as Database from "./store/Database"
import * as KeyCooldownStore from "./store/KeyCooldownStore"
import * as Stores from "./store/Stores"
import { BlockTargetResolver } from "./tools/builtin/blocking/BlockTargetResolver"
import { makeBlockUserTool } from "./tools/builtin/blocking/BlockUserTool"
import { makeUnblockUserTool } from "./tools/builtin/blocking/UnblockUserTool"
import { fetchUrlTool } from "./tools/builtin/fetchUrl/FetchUrlTool"
import { mediaTools } from "./tools/builtin/media/mediaTools"
import { shortTermMemoryContext } from "./tools/builtin/memory/shortTermMemoryContext"
import { makeUpdateShortTermMemoryTool } from "./tools/builtin/memory/UpdateShortTermMemoryTool"
import { makeSelectStickerTool } from "./tools/builtin/stickers/SelectStickerTool"
import { webSearchTool } from "./tools/builtin/webSearch/WebSearchTool"
import { GuildToolSource } from "./tools/GuildToolSource"
import * as InMemoryToolAffordances from "./tools/InMemoryToolAffordances"
import { StickerCatalog } from "./tools/StickerCatalog"
import { make as makeToolRegistry, registerAll, ToolRegistry } from "./tools/ToolRegistry"
import { TerminalApprovals } from "./terminal/TerminalApprovals"

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
    ContextConfig.layer,
    ServerSettingsConfig.layer,
    ModelChoiceConfig.layer,
    front === "discord" ? DiscordConfig.layer : Layer.empty
  )))

/**
 * The model for LLM_PROVIDER; HTTP providers talk through undici, at most 256 sockets per origin.
 * Only the chosen provider's modules are loaded. Reasoning a model writes into its text
 * (`<think>…</think>`) is taken out of the answer as it streams. Passes get spans and provider errors get
 * counted when telemetry is on (ops/instrumentedModel).
 */
const providerLayer = (kind: ProviderKind): Layer.Layer<LanguageModel, Config.ConfigError> =>
  instrumentedModelLayer(reasoningTagsLayer(
    kind === "scripted"
      ? lazyLayer(() => import("./provider/scriptedLive"), (module) => module.scriptedLive)
      : lazyLayer(() => import("./provider/httpProviderLive"), (module) => module.httpProviderLive(kind))
  ))

/** Every store over DATABASE_URL (SQLite by default), migrated once at start-up. */
export const storesLive = Stores.layerConfig.pipe(Layer.provide(Layer.merge(StoreConfig.layer, CredentialConfig.layer)))

/** The database the stores use (the same instance: layers are shared within one build), for health checks and leases. */
export const databaseLive = Database.layerConfig.pipe(Layer.provide(StoreConfig.layer))

/** API-key rests shared through the database when it is PostgreSQL (several hosts of one bot); else in memory. */
const sharedKeyCooldownsLive = Layer.unwrap(
  Effect.map(StoreConfig, ({ database }) =>
    database._tag === "Postgres"
      ? KeyCooldownStore.layer.pipe(Layer.provide(Layer.merge(databaseLive, routePlanLayer.pipe(Layer.provide(ProviderConfig.layer)))))
      : Layer.succeed(SharedKeyCooldowns, Option.none()))
).pipe(Layer.provide(StoreConfig.layer))

/** fetch_url's URL policy and the pinned connector (guild MCP uses the connector too). */
export const outboundNetwork = Layer.merge(AddressPolicy.layerSystem, SocketConnector.system)

/** safe_http, the HTML converter (worker threads) and what fetch_url reads besides them. */
const fetchLive = Layer.merge(SafeHttp.Default, HtmlConverter.Default).pipe(Layer.provideMerge(Layer.merge(FetchConfig.layer, outboundNetwork)))

/**
 * Media: the library of opaque media ids and the image loader (safe_http with the
 * VISION_MAX_IMAGE_MB cap), one instance shared by the registry, the vision gate, the media tools
 * and the fronts.
 */
const mediaLive = ImageLoader.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(MediaLibrary.Default, VisionConfig.layer)),
  Layer.provide(fetchLive)
)

/** The model a turn talks to: the provider's, behind the vision gate (images only for LLM_VISION_MODELS). */
const turnModel = (model: Layer.Layer<LanguageModel, Config.ConfigError>) =>
  VisionGate.layer.pipe(Layer.provide(Layer.merge(model, mediaLive)))

/**
 * Services that differ by front: where hidden notices go, the sticker catalog, who can be
 * blocked, message lookups, and guild tools (guild MCP: only the Discord front has guilds). A
 * front may add its own (tool approvals): they reach every turn.
 */
type FrontServices = ThoughtLog | StickerCatalog | BlockTargetResolver | MessageImages | GuildToolSource

/** The terminal has no guild: notices are logged, no stickers, nobody to block, no messages to look up, no guild MCP. */
export const terminalFrontServices: Layer.Layer<FrontServices> = Layer.mergeAll(
  ThoughtLog.logged,
  StickerCatalog.none,
  BlockTargetResolver.fromMembers({}),
  MessageImages.none,
  GuildToolSource.none
)

/** The interactive chat: the terminal's services, and tools that ask `[y/N]` before they run (`/approvals`). */
export const terminalInteractiveServices = Layer.merge(
  terminalFrontServices,
  TerminalApprovals.live.pipe(Layer.provide(ServerSettingsConfig.layer))
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
const toolRegistryLive = (model: Layer.Layer<LanguageModel, Config.ConfigError>) =>
  Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const registry = yield* makeToolRegistry
      yield* Effect.orDie(registerAll(registry, [...(yield* builtinTools), ...(yield* mediaTools)]))
      // Tool calls get spans when telemetry is on (ops/instrumentedTools).
      return yield* instrumentToolRegistry(registry)
    })
  ).pipe(
    Layer.provide(Layer.mergeAll(
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

/**
 * Global MCP servers (MCP_SERVERS), built once their first connect attempts ended (so the first
 * turn has their tools):
 * the MCP SDK is loaded only when at least one is configured.
 */
const globalMcpServersLive: Layer.Layer<never, never, McpConfig | ToolRegistry> = Layer.unwrap(
  Effect.map(McpConfig, (settings) =>
    settings.globalServers.length === 0
      ? Layer.empty
      : lazyLayer(() => import("./mcp/GlobalMcpServers"), (module) => module.GlobalMcpServersLive))
)

/** The registry with built-ins, plus the global MCP servers' tools. */
const toolsLive = (model: Layer.Layer<LanguageModel, Config.ConfigError>) => {
  const registry = toolRegistryLive(model)
  return Layer.merge(registry, globalMcpServersLive.pipe(Layer.provide(Layer.merge(registry, McpConfig.layer))))
}

/** Everything a turn needs besides what the front provides per turn (sink, signals, turn facts). */
const turnServices = <E, R>(kind: ProviderKind, front: Layer.Layer<FrontServices, E, R>) => {
  // One provider layer: the turn's model and analyze_image share its connection pool.
  const model = providerLayer(kind)
  return Layer.mergeAll(
    turnModel(model),
    toolsLive(model).pipe(Layer.provide(front)),
    front,
    mediaLive,
    LoopConfig.layer,
    DraftingConfig.layer,
    ServerSettingsConfig.layer,
    ModelChoiceConfig.layer,
    InMemoryToolAffordances.layer,
    storesLive,
    shortTermMemoryContext.pipe(Layer.provide(storesLive)),
    PendingContextStash.Default,
    routePlanLayer.pipe(Layer.provide(ProviderConfig.layer)),
    KeyPool.Default.pipe(Layer.provide(sharedKeyCooldownsLive)),
    // Every model's context window (setting, its server's answer, the table), and the budget's settings.
    ModelWindowsLive.layer.pipe(Layer.provide(Layer.merge(ProviderConfig.layer, ContextConfig.layer))),
    ContextConfig.layer
  )
}

/** The ChannelQueue over the turn services (what every front submits messages to). */
export const chatLayer = <E, R>(kind: ProviderKind, front: Layer.Layer<FrontServices, E, R>) =>
  ChannelQueue.Default.pipe(
    Layer.provide(Layer.merge(TurnRunner.Default, ChatConfig.layer)),
    Layer.provideMerge(turnServices(kind, front))
  )

/**
 * The Discord bot (DISCORD_TOKEN set): logs in, registers commands, answers until stopped.
 * Its wiring (discord.js, guild MCP, credentials) is loaded only here: see discordLayers.ts;
 * the terminal front never imports it.
 */
export const discordBotLayer = (kind: ProviderKind) =>
  lazyLayer(() => import("./discordLayers"), (module) => module.discordBotLayer(kind))
