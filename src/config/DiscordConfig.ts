import { Config, Context, Layer, Option, Redacted } from "effect"

/** Settings of the Discord front (design §5.2). */
export interface DiscordSettings {
  readonly token: Redacted.Redacted<string>
  /** REST base (`rest.api` of discord.js), e.g. `http://127.0.0.1:PORT/api` for a loopback fake. */
  readonly apiBaseUrl: string | undefined
  /** Channel that receives hidden notices (tool failures, truncations) as embeds. */
  readonly thoughtLogChannelId: string | undefined
  /** Register slash commands in this guild only (instant, for development) instead of globally. */
  readonly commandGuildId: string | undefined
}

const optionalString = (name: string) =>
  Config.option(Config.nonEmptyString(name)).pipe(Config.map(Option.getOrUndefined))

const snowflake = (name: string) =>
  Config.option(Config.string(name)).pipe(
    Config.validate({
      message: "must be a Discord id (digits only)",
      validation: (value) => Option.match(value, { onNone: () => true, onSome: (id) => /^\d{5,22}$/.test(id.trim()) })
    }),
    Config.map((value) => Option.getOrUndefined(Option.map(value, (id) => id.trim())))
  )

const apiBase = Config.option(Config.string("DISCORD_API_BASE_URL")).pipe(
  Config.validate({
    message: "must be an http(s) URL such as https://discord.com/api",
    validation: (value) => Option.match(value, { onNone: () => true, onSome: (url) => /^https?:\/\/[^\s]+$/.test(url.trim()) })
  }),
  // discord.js appends `/v10/...` itself.
  Config.map((value) => Option.getOrUndefined(Option.map(value, (url) => url.trim().replace(/\/+$/, ""))))
)

const fromEnv: Config.Config<DiscordSettings> = Config.all({
  token: Config.redacted(Config.nonEmptyString("DISCORD_TOKEN")),
  apiBaseUrl: apiBase,
  thoughtLogChannelId: snowflake("THOUGHT_LOG_CHANNEL_ID"),
  commandGuildId: snowflake("DISCORD_COMMAND_GUILD_ID")
})

/** Whether the environment asks for the Discord front (`DISCORD_TOKEN` set and non-empty). */
export const discordTokenPresent: Config.Config<boolean> = optionalString("DISCORD_TOKEN").pipe(
  Config.map((token) => token !== undefined && token.trim().length > 0)
)

export class DiscordConfig extends Context.Tag("loopcord/config/DiscordConfig")<DiscordConfig, DiscordSettings>() {
  static readonly layer = Layer.effect(DiscordConfig, fromEnv)
  /** Explicit settings, for tests and embedding. */
  static readonly make = (settings: { readonly token: string } & Partial<Omit<DiscordSettings, "token">>) =>
    Layer.succeed(DiscordConfig, {
      apiBaseUrl: undefined,
      thoughtLogChannelId: undefined,
      commandGuildId: undefined,
      ...settings,
      token: Redacted.make(settings.token)
    })
}
