import { Config, Context, Layer } from "effect"
import { intSetting } from "./settings"

/** Settings of the channel queue (docs/architecture.md, Bounded channel queue). */
export interface ChatSettings {
  /** Turns that may wait per channel; a message beyond folds into the newest waiting turn. */
  readonly channelQueueMax: number
}

export const defaultChatSettings: ChatSettings = { channelQueueMax: 5 }

const fromEnv: Config.Config<ChatSettings> = Config.all({
  channelQueueMax: intSetting("CHANNEL_QUEUE_MAX", { default: defaultChatSettings.channelQueueMax, min: 1 })
})

/**
 * A Reference: the ChannelQueue finds the defaults without wiring (tests, embedding); `main`
 * provides the environment's values through `ChatConfig.layer`.
 */
export class ChatConfig extends Context.Reference<ChatSettings>("loopcord/config/ChatConfig", {
  defaultValue: () => defaultChatSettings
}) {
  static readonly layer = Layer.effect(ChatConfig, fromEnv)
  /** Defaults with overrides, for tests. */
  static readonly make = (overrides: Partial<ChatSettings> = {}) =>
    Layer.succeed(ChatConfig, { ...defaultChatSettings, ...overrides })
}
