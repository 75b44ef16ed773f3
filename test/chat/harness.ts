import { Effect, Layer } from "effect"
import { ChannelQueue } from "../../src/chat/ChannelQueue"
import { type CollectingSink, makeCollectingSink } from "../../src/chat/CollectingSink"
import type { TurnInput } from "../../src/chat/TurnInput"
import { TurnRunner } from "../../src/chat/TurnRunner"
import { ChatConfig, type ChatSettings } from "../../src/config/ChatConfig"
import { LoopConfig, type LoopSettings } from "../../src/config/LoopConfig"
import type { ChatMessage } from "../../src/domain/ChatMessage"
import { KeyPool } from "../../src/loop/KeyPool"
import { PendingContextStash } from "../../src/loop/PendingContextStash"
import { RoutePlan } from "../../src/loop/RoutePlan"
import { ThoughtLog } from "../../src/loop/ThoughtLog"
import type { Script } from "../../src/provider/scripted/Script"
import * as Scripted from "../../src/provider/scripted/ScriptedModel"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import * as InMemoryToolAffordances from "../../src/tools/InMemoryToolAffordances"
import { StickerCatalog } from "../../src/tools/StickerCatalog"
import type { Tool } from "../../src/tools/Tool"
import { registerAll, ToolRegistry } from "../../src/tools/ToolRegistry"
import { ToolUsageStats } from "../../src/tools/ToolUsageStats"
import { settlingTestClock } from "../support/settlingClock"

/** The services a chat turn needs, in memory: a scripted model, a registry with `tools`, one model. */
export const coreLayer = (options: {
  readonly script: Script
  readonly tools?: ReadonlyArray<Tool>
  readonly loop?: Partial<LoopSettings>
  readonly models?: ReadonlyArray<string>
}) => {
  const registryWithTools = Layer.effect(
    ToolRegistry,
    Effect.gen(function*() {
      const made = yield* Effect.provide(ToolRegistry, ToolRegistry.layer)
      yield* Effect.orDie(registerAll(made, options.tools ?? []))
      return made
    })
  ).pipe(Layer.provide(GuildToolSource.none))
  return Layer.mergeAll(
    Scripted.layer({ script: options.script }),
    registryWithTools,
    ThoughtLog.logged,
    LoopConfig.make(options.loop),
    InMemoryToolAffordances.layer,
    StickerCatalog.none,
    ToolUsageStats.none,
    PendingContextStash.Default,
    RoutePlan.make(options.models ?? ["model-a"]),
    KeyPool.Default,
    settlingTestClock
  )
}

/** ChannelQueue over `coreLayer`, exposing the core services too (the probe, the registry). */
export const queueLayer = (options: Parameters<typeof coreLayer>[0] & { readonly chat?: Partial<ChatSettings> }) => {
  const core = coreLayer(options)
  return ChannelQueue.Default.pipe(Layer.provide(Layer.merge(TurnRunner.Default, ChatConfig.make(options.chat))), Layer.provideMerge(core))
}

export interface TestTurn {
  readonly input: TurnInput
  readonly collected: CollectingSink
}

/**
 * A message from `user` in `channelId`; the reply goes to a collecting sink returned with it.
 * `carryMessage`: the input names its message (`TurnInput.message`), as the terminal does.
 */
export const message = (
  text: string,
  options: { readonly channelId?: string; readonly history?: ReadonlyArray<ChatMessage>; readonly carryMessage?: boolean } = {}
) =>
  Effect.map(makeCollectingSink(), (collected): TestTurn => {
    const own: ChatMessage = { role: "user", content: text }
    return {
      collected,
      input: {
        ...(options.carryMessage === true ? { message: own } : {}),
        channelId: options.channelId ?? "channel-1",
        guildId: "guild-1",
        userId: "user-1",
        messageId: `message-${text}`,
        isDM: false,
        locale: "en",
        persona: { id: undefined, name: "Loopcord", avatarUrl: undefined, systemPrompt: "You are a test bot." },
        loadContext: Effect.succeed([...(options.history ?? []), own]),
        shouldSurfaceUserErrors: true,
        openSink: Effect.succeed({ sink: collected.sink })
      }
    }
  })
