import { ConfigProvider, Effect, Layer } from "effect"
import { settingsProvider } from "../../../src/config/dotenv"
import { McpConfig, type McpSettings } from "../../../src/config/McpConfig"
import { AddressPolicy } from "../../../src/fetch/AddressPolicy"
import { DnsResolver, type DnsResolverShape } from "../../../src/fetch/DnsResolver"
import { GuildMcpAddressPolicy } from "../../../src/mcp/GuildMcpAddressPolicy"
import { GuildMcpAdmin } from "../../../src/mcp/GuildMcpAdmin"
import { GuildMcpHttp } from "../../../src/mcp/GuildMcpHttp"
import { GuildMcpPool } from "../../../src/mcp/GuildMcpPool"
import type { GuildMcpRegistry, GuildMcpServerConfig } from "../../../src/mcp/GuildMcpRegistry"
import { GuildMcpTools } from "../../../src/mcp/GuildMcpTools"
import { InMemoryGuildMcpRegistry } from "../../../src/mcp/InMemoryGuildMcpRegistry"
import type { AvailabilityContext } from "../../../src/tools/Tool"
import { ToolContext, type ToolContextShape } from "../../../src/tools/ToolContext"
import { ToolRegistry } from "../../../src/tools/ToolRegistry"
import { initialTurnFlags } from "../../../src/tools/TurnState"
import { loopbackConnector } from "../fakeWeb/loopbackConnector"
import { testToolContext } from "../tools/testToolContext"

/** Starts a test server for the current scope; it is closed when the scope closes. */
export const serve = <S extends { readonly close: () => Promise<void> }>(start: () => Promise<S>) =>
  Effect.acquireRelease(Effect.promise(start), (server) => Effect.promise(() => server.close()))

/** Waits in **real** time (the servers run outside the TestClock) until `condition` holds. */
export const waitUntil = (condition: () => boolean, what: string, timeoutMs = 5_000) =>
  Effect.promise(
    () =>
      new Promise<void>((resolve, reject) => {
        const started = performance.now()
        const check = () => {
          if (condition()) return resolve()
          if (performance.now() - started > timeoutMs) return reject(new Error(`timed out waiting for ${what}`))
          setTimeout(check, 5)
        }
        check()
      })
  )

export const guildServer = (overrides: Partial<GuildMcpServerConfig> & { readonly url: string }): GuildMcpServerConfig => ({
  guildId: "guild-1",
  name: "tools",
  type: "generic",
  enabled: true,
  headers: {},
  addedBy: "admin-1",
  addedAt: 0,
  ...overrides
})

export interface GuildMcpTestOptions {
  readonly settings?: Partial<McpSettings>
  /** Fake DNS (names not listed fail like NXDOMAIN). */
  readonly dns?: Readonly<Record<string, ReadonlyArray<string>>>
  /** Pretend-public addresses the socket connector maps to loopback. */
  readonly translate?: Readonly<Record<string, string>>
  /** The guild MCP address policy refuses private networks when false (test default: allowed). */
  readonly allowPrivateNetwork?: boolean
  /** fetch_url's policy, which judges url_fetcher arguments (default: as `allowPrivateNetwork`). */
  readonly fetchAllowPrivateNetwork?: boolean
  /** A resolver of your own (rebinding, counting); overrides `dns`. */
  readonly resolver?: DnsResolverShape
  /**
   * Build McpConfig and both address policies the way the app does, from these variables only
   * (`{}` is a default install: no RUN_ENV, no opt-ins). Overrides `settings` and the policy flags.
   */
  readonly env?: Readonly<Record<string, string>>
  readonly registrations?: ReadonlyArray<GuildMcpServerConfig>
  /** Where registrations live (default: in memory, pre-filled with `registrations`). */
  readonly registry?: Layer.Layer<GuildMcpRegistry, unknown>
}

/**
 * The guild MCP stack on the real guarded fetch: both address policies with a fake DNS, a
 * socket connector that refuses anything but loopback, the pool, the tool source and the admin.
 */
export const guildMcpLayer = (options: GuildMcpTestOptions = {}) => {
  const connector = loopbackConnector(options.translate)
  const resolver = options.resolver === undefined ? DnsResolver.fromTable(options.dns ?? {}) : Layer.succeed(DnsResolver, options.resolver)
  const guildAllows = options.allowPrivateNetwork ?? true
  const fromEnv = options.env === undefined
    ? undefined
    : ConfigProvider.layer(settingsProvider(options.env))
  const config = fromEnv === undefined ? McpConfig.make(options.settings) : McpConfig.layer.pipe(Layer.provide(fromEnv), Layer.orDie)
  const fetchPolicy = (fromEnv === undefined
    ? AddressPolicy.make({ allowPrivateNetwork: options.fetchAllowPrivateNetwork ?? guildAllows })
    : AddressPolicy.layer.pipe(Layer.provide(fromEnv), Layer.orDie)).pipe(Layer.provide(resolver))
  const guildPolicy = (fromEnv === undefined
    ? GuildMcpAddressPolicy.make({ allowPrivateNetwork: guildAllows })
    : GuildMcpAddressPolicy.layer.pipe(Layer.provide(config))).pipe(Layer.provide(resolver))
  const http = GuildMcpHttp.guarded.pipe(Layer.provide(Layer.mergeAll(guildPolicy, connector.layer, config)))
  const pool = GuildMcpPool.Default.pipe(Layer.provide(Layer.merge(http, config)))
  const registry = options.registry === undefined
    ? InMemoryGuildMcpRegistry.make(options.registrations ?? [])
    : options.registry.pipe(Layer.orDie)
  const services = Layer.mergeAll(GuildMcpTools.Default, GuildMcpAdmin.Default).pipe(
    Layer.provideMerge(Layer.mergeAll(pool, registry, fetchPolicy, guildPolicy, config))
  )
  return { layer: services, connector }
}


export const provideToolContext = (context: ToolContextShape) => Effect.provideService(ToolContext, context)

/** The real ToolRegistry fed by the guild MCP tool source, plus the guild MCP stack. */
export const registryWithGuildMcp = (options: GuildMcpTestOptions = {}) => {
  const guild = guildMcpLayer(options)
  return {
    layer: ToolRegistry.layer.pipe(Layer.provide(GuildMcpTools.toolSource), Layer.provideMerge(guild.layer)),
    connector: guild.connector
  }
}

/** A turn in guild-1 for `toolsForTurn`. */
export const guildTurn: AvailabilityContext = {
  provider: "openai-compatible",
  model: "test-model",
  guildId: "guild-1",
  channelId: "channel-1",
  flags: initialTurnFlags
}

/** Re-runs `effect` (waiting 10 ms of **real** time in between) until `accept` holds; 5 s at most. */
export const eventually = <A, E, R>(effect: Effect.Effect<A, E, R>, accept: (value: A) => boolean, what: string) =>
  Effect.gen(function* () {
    const started = performance.now()
    for (;;) {
      const value = yield* effect
      if (accept(value)) return value
      if (performance.now() - started > 5_000) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
  })

/** A ToolContext for calling tools directly (see testToolContext). */
export const makeToolContext = testToolContext
