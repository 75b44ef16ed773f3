import { Config, Context, Result, Layer, Option, Redacted } from "effect"
import type { Persona } from "../domain/Persona"
import { DEFAULT_PERSONA_NAME, DEFAULT_SYSTEM_PROMPT, personaSetting } from "./PersonaConfig"
import { type ShardAssignment, shardAssignmentSetting } from "./ShardConfig"
import { intSetting } from "./settings"
import { invalidSetting, mapOrFail } from "./settingError"

/** Messages of reply text per turn when DISCORD_MAX_MESSAGES_PER_TURN is unset (docs/architecture.md, Delivery). */
export const DEFAULT_MAX_MESSAGES_PER_TURN = 10

/** REST requests per second of the whole bot when DISCORD_GLOBAL_REQUESTS_PER_SECOND is unset: below Discord's 50. */
const DEFAULT_GLOBAL_REQUESTS_PER_SECOND = 45

/** Settings of the Discord front. */
interface DiscordSettings {
  readonly token: Redacted.Redacted<string>
  /** REST base (`rest.api` of discord.js), e.g. `http://127.0.0.1:PORT/api` for a loopback fake. */
  readonly apiBaseUrl: string | undefined
  /** Channel that receives hidden notices (tool failures, truncations) as embeds. */
  readonly thoughtLogChannelId: string | undefined
  /** Register slash commands in this guild only (instant, for development) instead of globally. */
  readonly commandGuildId: string | undefined
  /** `BOT_PERSONA_NAME` / `BOT_SYSTEM_PROMPT` (PersonaConfig), with `BOT_PERSONA_AVATAR_URL`. */
  readonly persona: Persona
  /**
   * Replies come as the persona (its name and avatar) through a channel webhook: on when
   * `BOT_PERSONA_NAME` is set; otherwise the bot answers as its own account.
   */
  readonly personaWebhooks: boolean
  /** `DISCORD_SHARD_IDS` / `DISCORD_SHARD_COUNT`: the shards this host runs (several hosts split one bot). */
  readonly shards: ShardAssignment | undefined
  /** `DISCORD_MAX_MESSAGES_PER_TURN` (10, min 1): a reply needing more messages is cut with a marker. */
  readonly maxMessagesPerTurn: number
  /**
   * `DISCORD_GLOBAL_REQUESTS_PER_SECOND` (45, min 1): every REST request of the bot in any one
   * second, for the whole bot token; a host paces itself on its share of the shards.
   */
  readonly globalRequestsPerSecond: number
}

const trimmedOption = (name: string) =>
  Config.option(Config.String(name)).pipe(
    Config.map((value) => Option.filter(Option.map(value, (text) => text.trim()), (text) => text.length > 0))
  )

const validated = (name: string, message: string, test: (value: string) => boolean): Config.Config<string | undefined> =>
  trimmedOption(name).pipe(
    mapOrFail((value) =>
      Option.match(value, { onNone: () => true, onSome: test }) ? Result.succeed(Option.getOrUndefined(value)) : Result.fail(invalidSetting(name, message))
    )
  )

const snowflake = (name: string) => validated(name, "must be a Discord id (digits only)", (id) => /^\d{5,22}$/.test(id))

// discord.js appends `/v10/...` itself.
const apiBase = validated("DISCORD_API_BASE_URL", "must be an http(s) URL such as https://discord.com/api", (url) => /^https?:\/\/\S+$/.test(url)).pipe(
  Config.map((url) => url?.replace(/\/+$/, ""))
)

/** `DISCORD_TOKEN`, blank counting as unset (parsed here only). */
const tokenSetting: Config.Config<Option.Option<Redacted.Redacted<string>>> = trimmedOption("DISCORD_TOKEN").pipe(
  Config.map(Option.map((token) => Redacted.make(token)))
)

/** `DISCORD_TOKEN` is set (and not blank): `npm start` runs the Discord front. */
export const discordTokenPresent: Config.Config<boolean> = Config.map(tokenSetting, Option.isSome)

const fromEnv: Config.Config<DiscordSettings> = Config.all({
  token: tokenSetting,
  apiBaseUrl: apiBase,
  thoughtLogChannelId: snowflake("THOUGHT_LOG_CHANNEL_ID"),
  commandGuildId: snowflake("DISCORD_COMMAND_GUILD_ID"),
  persona: personaSetting,
  avatarUrl: validated("BOT_PERSONA_AVATAR_URL", "must be an https URL of an image", (url) => /^https:\/\/\S+$/.test(url)),
  personaWebhooks: Config.map(trimmedOption("BOT_PERSONA_NAME"), Option.isSome),
  shards: Config.map(shardAssignmentSetting, Option.getOrUndefined),
  maxMessagesPerTurn: intSetting("DISCORD_MAX_MESSAGES_PER_TURN", { default: DEFAULT_MAX_MESSAGES_PER_TURN, min: 1 }),
  globalRequestsPerSecond: intSetting("DISCORD_GLOBAL_REQUESTS_PER_SECOND", { default: DEFAULT_GLOBAL_REQUESTS_PER_SECOND, min: 1 })
}).pipe(
  // Checked once every variable is read, so a missing token does not hide the other settings.
  mapOrFail(({ avatarUrl, persona, token, ...rest }) =>
    Option.match(token, {
      onNone: () => Result.fail(invalidSetting("DISCORD_TOKEN", "DISCORD_TOKEN is required for the Discord bot: the token of its Bot page in the Developer Portal")),
      onSome: (token) => Result.succeed({ ...rest, token, persona: { ...persona, avatarUrl } })
    })
  )
)

export class DiscordConfig extends Context.Service<DiscordConfig, DiscordSettings>()("loopcord/config/DiscordConfig") {
  static readonly layer = Layer.effect(DiscordConfig, fromEnv)
  /** Explicit settings, for tests and embedding. */
  static readonly make = (settings: { readonly token: string } & Partial<Omit<DiscordSettings, "token">>) =>
    Layer.succeed(DiscordConfig, {
      apiBaseUrl: undefined,
      thoughtLogChannelId: undefined,
      commandGuildId: undefined,
      persona: { id: undefined, name: DEFAULT_PERSONA_NAME, avatarUrl: undefined, systemPrompt: DEFAULT_SYSTEM_PROMPT },
      personaWebhooks: false,
      shards: undefined,
      maxMessagesPerTurn: DEFAULT_MAX_MESSAGES_PER_TURN,
      globalRequestsPerSecond: DEFAULT_GLOBAL_REQUESTS_PER_SECOND,
      ...settings,
      token: Redacted.make(settings.token)
    })
}
