import { Clock, Context, Data, Deferred, Duration, Effect, Exit, HashMap, Layer, Option, Ref } from "effect"
import { McpConfig } from "../config/McpConfig"
import { makeCircuitBreaker } from "./CircuitBreaker"
import { publishOpenBreakers } from "./mcpMetrics"
import { type GuildConnector, makeGuildConnector } from "./guildConnect"
import type { GuildMcpHttp } from "./GuildMcpHttp"
import type { GuildMcpServerConfig } from "./GuildMcpRegistry"
import { type McpConnectError, McpQuarantinedError, McpServerUnavailableError, type McpTransportKind } from "./McpErrors"
import type { McpSession } from "./McpSession"
import { serverLabel } from "./serverLabel"

/** Server names match ignoring case everywhere (the store keys them that way too). */
export const sameServerName = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase()

/** Pool key: one connection per guild and server name (any case). */
const poolKey = (guildId: string, name: string): string => `${guildId}:${name.toLowerCase()}`

/** A registration whose URL or headers changed needs a new connection. */
const fingerprint = (config: GuildMcpServerConfig): string =>
  JSON.stringify([config.url, Object.entries(config.headers).sort(([a], [b]) => a.localeCompare(b))])

type Entry =
  | {
      readonly _tag: "Connecting"
      readonly id: number
      readonly fingerprint: string
      readonly attempt: Deferred.Deferred<McpSession, McpConnectError | McpServerUnavailableError>
    }
  | { readonly _tag: "Ready"; readonly fingerprint: string; readonly session: McpSession; readonly lastUsedAt: number }

/** What `/mcp list` shows about a server's connection. */
export type ConnectionStatus = Data.TaggedEnum<{
  Connected: { readonly transport: McpTransportKind; readonly toolNames: ReadonlyArray<string>; readonly lastUsedAt: number }
  Connecting: {}
  Quarantined: { readonly until: number }
  Idle: {}
}>
export const ConnectionStatus = Data.taggedEnum<ConnectionStatus>()

type Plan =
  | { readonly _tag: "Use"; readonly session: McpSession }
  | { readonly _tag: "Await"; readonly attempt: Deferred.Deferred<McpSession, McpConnectError | McpServerUnavailableError> }
  | { readonly _tag: "Held"; readonly until: number }
  | { readonly _tag: "Start"; readonly stale: Option.Option<McpSession> }

const makeGuildMcpPool = Effect.gen(function* () {
  const settings = yield* McpConfig
  const connect: GuildConnector = yield* makeGuildConnector
  const breaker = yield* makeCircuitBreaker(settings.guildFailureCooldown, publishOpenBreakers)
  const entries = yield* Ref.make(HashMap.empty<string, Entry>())
  const nextId = yield* Ref.make(0)
  const scope = yield* Effect.scope
  const runFork = Effect.runForkWith(yield* Effect.context<never>())

  /** Removes `key` when `isOurs(entry)`; returns the removed entry. */
  const removeIf = (key: string, isOurs: (entry: Entry) => boolean) =>
    Ref.modify(entries, (map): [Option.Option<Entry>, HashMap.HashMap<string, Entry>] => {
      const current = HashMap.get(map, key)
      return Option.isSome(current) && isOurs(current.value) ? [current, HashMap.remove(map, key)] : [Option.none(), map]
    })

  const closeEntry = (entry: Option.Option<Entry>) =>
    Option.isSome(entry) && entry.value._tag === "Ready" ? entry.value.session.close : Effect.void

  type Attempt = Deferred.Deferred<McpSession, McpConnectError | McpServerUnavailableError>

  const settle = (key: string, id: number, config: GuildMcpServerConfig, attempt: Attempt, exit: Exit.Exit<McpSession, McpConnectError>) =>
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const isThisAttempt = (entry: Entry) => entry._tag === "Connecting" && entry.id === id
      if (Exit.isSuccess(exit)) {
        const session = exit.value
        const pooled = yield* Ref.modify(entries, (map): [boolean, HashMap.HashMap<string, Entry>] => {
          const entry = HashMap.get(map, key)
          if (Option.isNone(entry) || !isThisAttempt(entry.value)) return [false, map]
          return [true, HashMap.set(map, key, { _tag: "Ready", fingerprint: fingerprint(config), session, lastUsedAt: now })]
        })
        if (!pooled) {
          // Removed, disabled or re-registered while connecting: nobody may use this client.
          yield* session.close
          yield* Deferred.fail(
            attempt,
            new McpServerUnavailableError({ server: config.name, detail: `MCP server '${config.name}' changed while connecting` })
          )
          return
        }
        yield* breaker.clear(key)
        // A transport that dies (SSE stream closed, stdio exit) leaves the pool at once.
        session.client.onclose = () => {
          runFork(removeIf(key, (entry) => entry._tag === "Ready" && entry.session === session))
        }
        yield* Effect.logInfo(`Guild MCP server ${serverLabel(config.name, config.url)} connected over ${session.transport} (${session.tools.length} tools)`)
        yield* Deferred.succeed(attempt, session)
        return
      }
      const removed = yield* removeIf(key, isThisAttempt)
      if (Option.isSome(removed) && !Exit.hasInterrupts(exit)) {
        const until = yield* breaker.trip(key)
        yield* Effect.logError(
          `Guild MCP server ${serverLabel(config.name, config.url)} failed to connect; no new attempt until ${new Date(until).toISOString()}`,
          exit.cause
        )
      }
      yield* Exit.hasInterrupts(exit) ? Deferred.interrupt(attempt) : Deferred.done(attempt, exit)
    })

  const startAttempt = (key: string, id: number, config: GuildMcpServerConfig, attempt: Attempt) =>
    connect(config).pipe(
      Effect.onExit((exit) => settle(key, id, config, attempt, exit)),
      Effect.annotateLogs({ guildId: config.guildId, mcpServer: config.name }),
      Effect.forkIn(scope)
    )

  /** The pooled session for `config`, connecting if needed (lazy). Fails fast while quarantined. */
  const session = Effect.fn("GuildMcpPool.session")(function* (config: GuildMcpServerConfig) {
    const key = poolKey(config.guildId, config.name)
    const fp = fingerprint(config)
    const now = yield* Clock.currentTimeMillis
    const held = yield* breaker.heldUntil(key)
    const attempt = yield* Deferred.make<McpSession, McpConnectError | McpServerUnavailableError>()
    const id = yield* Ref.getAndUpdate(nextId, (n) => n + 1)
    const plan = yield* Ref.modify(entries, (map): [Plan, HashMap.HashMap<string, Entry>] => {
      const entry = HashMap.get(map, key)
      if (Option.isSome(entry) && entry.value.fingerprint === fp) {
        const current = entry.value
        if (current._tag === "Ready") {
          return [{ _tag: "Use", session: current.session }, HashMap.set(map, key, { ...current, lastUsedAt: now })]
        }
        return [{ _tag: "Await", attempt: current.attempt }, map]
      }
      const stale = Option.isSome(entry) && entry.value._tag === "Ready" ? Option.some(entry.value.session) : Option.none()
      if (Option.isSome(held)) return [{ _tag: "Held", until: held.value }, map]
      return [{ _tag: "Start", stale }, HashMap.set(map, key, { _tag: "Connecting", id, fingerprint: fp, attempt })]
    })
    switch (plan._tag) {
      case "Use":
        return plan.session
      case "Held":
        return yield* new McpQuarantinedError({ server: config.name, until: plan.until })
      case "Await":
        return yield* Deferred.await(plan.attempt)
      case "Start": {
        if (Option.isSome(plan.stale)) yield* plan.stale.value.close
        yield* startAttempt(key, id, config, attempt)
        return yield* Deferred.await(attempt)
      }
    }
  })

  /** Marks a session as used now (idle eviction counts from the last use). */
  const touch = Effect.fn("GuildMcpPool.touch")(function* (config: GuildMcpServerConfig, used: McpSession) {
    const now = yield* Clock.currentTimeMillis
    yield* Ref.update(entries, (map) =>
      HashMap.modify(map, poolKey(config.guildId, config.name), (entry) =>
        entry._tag === "Ready" && entry.session === used ? { ...entry, lastUsedAt: now } : entry
      )
    )
  })

  /** Drops a session the server no longer knows (expired); the next `session` call reconnects. */
  const invalidate = Effect.fn("GuildMcpPool.invalidate")(function* (config: GuildMcpServerConfig, stale: McpSession) {
    const removed = yield* removeIf(poolKey(config.guildId, config.name), (entry) => entry._tag === "Ready" && entry.session === stale)
    yield* Option.isSome(removed) ? stale.close : Effect.void
  })

  /**
   * Closes the server's connection (or abandons its in-flight attempt) and clears its quarantine:
   * `/mcp remove` and `/mcp disable`.
   */
  const disconnect = Effect.fn("GuildMcpPool.disconnect")(function* (guildId: string, name: string) {
    const key = poolKey(guildId, name)
    const removed = yield* removeIf(key, () => true)
    yield* breaker.clear(key)
    if (Option.isSome(removed) && removed.value._tag === "Connecting") {
      yield* Deferred.fail(
        removed.value.attempt,
        new McpServerUnavailableError({ server: name, detail: `MCP server '${name}' was removed or disabled` })
      )
    }
    yield* closeEntry(removed)
  })

  const status = Effect.fn("GuildMcpPool.status")(function* (guildId: string, name: string) {
    const key = poolKey(guildId, name)
    const entry = HashMap.get(yield* Ref.get(entries), key)
    if (Option.isSome(entry)) {
      const current = entry.value
      return current._tag === "Ready"
        ? ConnectionStatus.Connected({
            transport: current.session.transport,
            toolNames: current.session.tools.map((tool) => tool.declaredName),
            lastUsedAt: current.lastUsedAt
          })
        : ConnectionStatus.Connecting()
    }
    const held = yield* breaker.heldUntil(key)
    return Option.isSome(held) ? ConnectionStatus.Quarantined({ until: held.value }) : ConnectionStatus.Idle()
  })

  const sweep = Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const ttl = Duration.toMillis(settings.guildConnectionTtl)
    const idle = yield* Ref.modify(entries, (map): [ReadonlyArray<McpSession>, HashMap.HashMap<string, Entry>] => {
      const expired = HashMap.filter(map, (entry) => entry._tag === "Ready" && now - entry.lastUsedAt >= ttl)
      const sessions = Array.from(HashMap.values(expired)).flatMap((entry) => (entry._tag === "Ready" ? [entry.session] : []))
      return [sessions, HashMap.filter(map, (_entry, key) => !HashMap.has(expired, key))]
    })
    yield* Effect.forEach(idle, (evicted) => evicted.close, { discard: true })
    if (idle.length > 0) yield* Effect.logDebug(`Closed ${idle.length} idle guild MCP connection(s)`)
    yield* breaker.prune
  })

  yield* Effect.sleep(settings.guildSweepInterval).pipe(Effect.andThen(sweep), Effect.forever, Effect.forkScoped)

  // Shutdown: close every pooled client.
  yield* Effect.addFinalizer(() =>
    Ref.getAndSet(entries, HashMap.empty()).pipe(
      Effect.flatMap((map) => Effect.forEach(HashMap.values(map), (entry) => closeEntry(Option.some(entry)), { discard: true }))
    )
  )

  return { session, touch, invalidate, disconnect, status } as const
})

/**
 * Guild MCP connections (docs/architecture.md, Guild MCP servers): lazy, pooled by `guildId:name`,
 * one connect in flight per key (concurrent callers share it), a circuit breaker after a failed
 * connect, idle eviction swept on the Clock. Connect attempts run in the pool's scope, so a caller
 * that is killed does not cancel the attempt other callers are waiting for.
 */
export class GuildMcpPool extends Context.Service<GuildMcpPool, Effect.Success<typeof makeGuildMcpPool>>()("loopcord/mcp/GuildMcpPool") {
  /** Needs McpConfig and GuildMcpHttp; pooled clients close when the layer's scope closes. */
  static readonly Default: Layer.Layer<GuildMcpPool, never, McpConfig | GuildMcpHttp> = Layer.effect(GuildMcpPool, makeGuildMcpPool)
}
