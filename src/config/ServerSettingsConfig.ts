import { Config, Context, Duration, Layer } from "effect"
import { booleanConfig, intSetting, millisSetting } from "./settings"

/** The operator's limits on what servers configure for themselves (docs/architecture.md, Servers configure their bot). */
export interface ServerControlSettings {
  /** `TOOL_APPROVAL_TIMEOUT_MS`: how long a tool call waits for Approve / Deny before it is denied. */
  readonly toolApprovalTimeout: Duration.Duration
  /** `DISCORD_REPLY_CHAIN_MAX`: replied-to messages outside the recent history brought into the context (0: none). */
  readonly replyChainMax: number
  /** `DISCORD_ALLOW_DMS`: the bot answers direct messages. */
  readonly allowDms: boolean
}

/** Reply chains are fetched one message at a time: never more than this, whatever the setting says. */
const REPLY_CHAIN_CEILING = 50

const defaultServerControlSettings: ServerControlSettings = {
  toolApprovalTimeout: Duration.millis(120_000),
  replyChainMax: 10,
  allowDms: true
}

const fromEnv: Config.Config<ServerControlSettings> = Config.all({
  toolApprovalTimeout: millisSetting("TOOL_APPROVAL_TIMEOUT_MS", { default: 120_000, min: 5_000 }),
  replyChainMax: Config.map(intSetting("DISCORD_REPLY_CHAIN_MAX", { default: 10, min: 0 }), (value) => Math.min(value, REPLY_CHAIN_CEILING)),
  allowDms: booleanConfig("DISCORD_ALLOW_DMS").pipe(Config.withDefault(true))
})

/** A Reference: fronts and tests find the defaults without wiring; `main` provides the environment's. */
export class ServerSettingsConfig extends Context.Reference<ServerControlSettings>("loopcord/config/ServerSettingsConfig", {
  defaultValue: () => defaultServerControlSettings
}) {
  static readonly layer = Layer.effect(ServerSettingsConfig, fromEnv)
  static readonly make = (overrides: Partial<ServerControlSettings> = {}) =>
    Layer.succeed(ServerSettingsConfig, { ...defaultServerControlSettings, ...overrides })
}
