import { Effect, Layer, Ref } from "effect"
import { type GuildMcpServerConfig, GuildMcpRegistry, GuildMcpRegistryError, MAX_GUILD_MCP_SERVERS } from "./GuildMcpRegistry"

/** Names are unique per guild ignoring case, as in the database store. */
const isNamed = (entry: GuildMcpServerConfig, guildId: string, name: string): boolean =>
  entry.guildId === guildId && entry.name.toLowerCase() === name.toLowerCase()

/**
 * Guild MCP registrations kept in memory (tests, the terminal front, embedding). The store
 * module provides the database-backed one; both enforce the same cap and unique names.
 */
const makeInMemoryGuildMcpRegistry = (
  initial: ReadonlyArray<GuildMcpServerConfig> = [],
  options: { readonly maxPerGuild?: number } = {}
) =>
  Effect.gen(function* () {
    const maxPerGuild = options.maxPerGuild ?? MAX_GUILD_MCP_SERVERS
    const registrations = yield* Ref.make<ReadonlyArray<GuildMcpServerConfig>>(initial)

    const list = (guildId: string) =>
      Effect.map(Ref.get(registrations), (all) => all.filter((config) => config.guildId === guildId))

    const add = (config: GuildMcpServerConfig) =>
      Ref.modify(registrations, (all): [GuildMcpRegistryError | undefined, ReadonlyArray<GuildMcpServerConfig>] => {
        const guild = all.filter((entry) => entry.guildId === config.guildId)
        if (guild.some((entry) => isNamed(entry, config.guildId, config.name))) {
          return [new GuildMcpRegistryError({ reason: "duplicate_name", detail: `An MCP server named '${config.name}' already exists in this server` }), all]
        }
        if (guild.length >= maxPerGuild) {
          return [new GuildMcpRegistryError({ reason: "limit_reached", detail: `This server already has ${maxPerGuild} MCP servers (the maximum)` }), all]
        }
        return [undefined, [...all, config]]
      }).pipe(Effect.flatMap((error) => (error === undefined ? Effect.void : Effect.fail(error))))

    const remove = (guildId: string, name: string) =>
      Ref.modify(registrations, (all): [boolean, ReadonlyArray<GuildMcpServerConfig>] => {
        const kept = all.filter((entry) => !isNamed(entry, guildId, name))
        return [kept.length !== all.length, kept]
      })

    const setEnabled = (guildId: string, name: string, enabled: boolean) =>
      Ref.modify(registrations, (all): [boolean, ReadonlyArray<GuildMcpServerConfig>] => {
        const found = all.some((entry) => isNamed(entry, guildId, name))
        return [found, all.map((entry) => (isNamed(entry, guildId, name) ? { ...entry, enabled } : entry))]
      })

    return GuildMcpRegistry.of({ list, add, remove, setEnabled })
  })

export const InMemoryGuildMcpRegistry = {
  /** An empty registry. */
  layer: Layer.effect(GuildMcpRegistry, makeInMemoryGuildMcpRegistry()),
  /** Pre-filled registrations (tests). */
  make: (initial: ReadonlyArray<GuildMcpServerConfig>, options: { readonly maxPerGuild?: number } = {}) =>
    Layer.effect(GuildMcpRegistry, makeInMemoryGuildMcpRegistry(initial, options))
} as const
