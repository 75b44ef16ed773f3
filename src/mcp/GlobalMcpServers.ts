import { Context, Deferred, Duration, Effect, Layer, Option, Ref, Schedule } from "effect"
import { type GlobalMcpServerConfig, McpConfig } from "../config/McpConfig"
import type { ToolArgs } from "../domain/FunctionCall"
import { ToolContext } from "../tools/ToolContext"
import { ToolError } from "../tools/ToolError"
import { ToolRegistry, type ToolRegistryShape } from "../tools/ToolRegistry"
import { callMcpTool } from "./callMcpTool"
import { GLOBAL_DISCOVERY_LIMITS } from "./connectAttempt"
import { connectInOrder, type PlannedAttempt } from "./connectInOrder"
import type { McpAttemptFailure } from "./McpErrors"
import { toToolResult } from "./mcpResult"
import type { McpSession, McpToolInfo } from "./McpSession"
import { makeMcpTool } from "./mcpTool"
import { serverLabel } from "./serverLabel"
import { isLegacyHint, sseAttempt, stdioAttempt, streamableHttpAttempt } from "./mcpTransports"
import { abortableFetch } from "./requestSignal"

/** A stdio server may be installed on first start (npx): global connects get a generous deadline. */
const GLOBAL_CONNECT_TIMEOUT = Duration.seconds(60)
/** Pause before reconnecting a server whose connection dropped. */
const RECONNECT_PAUSE = Duration.seconds(1)
/** Failed connects are retried with backoff 2 s, 4 s, 8 s … capped at 5 minutes. */
const retrySchedule = Schedule.min([Schedule.exponential(Duration.seconds(2)), Schedule.spaced(Duration.minutes(5))])

const never = (_failure: McpAttemptFailure) => false

/** Operator-configured servers talk through plain fetch (they may live on the private network). */
const plainFetch = abortableFetch((url, init) => fetch(url, init))

const globalTransportPlan = (server: GlobalMcpServerConfig): ReadonlyArray<PlannedAttempt> => {
  if (server.transport === "stdio") {
    return [{ attempt: stdioAttempt(server.command ?? "", server.args), continueAfter: never }]
  }
  const options = { url: new URL(server.url ?? ""), fetch: plainFetch, headers: {} }
  if (server.transport === "sse") return [{ attempt: sseAttempt(options), continueAfter: never }]
  return [
    { attempt: streamableHttpAttempt(options), continueAfter: isLegacyHint },
    { attempt: sseAttempt(options), continueAfter: never }
  ]
}

const executeGlobal = (session: McpSession, info: McpToolInfo, resultMaxChars: number) =>
  Effect.fn("GlobalMcpServers.execute")(function* (args: ToolArgs) {
    const context = yield* ToolContext
    // Bounded by the loop's tool timeout and kill race; the abort closes the HTTP request.
    const output = yield* callMcpTool(session, info, args, { timeout: Duration.infinity, abortSignal: context.abortSignal }).pipe(
      Effect.catchTag("McpCallError", (error) =>
        error.reason === "session_expired"
          ? // Closing makes the server's loop reconnect; the call already sent is not replayed.
            Effect.andThen(
              session.close,
              new ToolError({
                tool: info.declaredName,
                error: `The MCP server '${session.server}' had dropped its session; it is reconnecting and this call was not run. Call the tool again if it is still needed.`
              })
            )
          : new ToolError({ tool: info.declaredName, error: error.modelText, detail: error.message })
      )
    )
    return toToolResult(info.mcpName, output, resultMaxChars)
  })

/**
 * Registers the session's tools, recording each registered name in `registered` as it goes (so
 * an interrupted registration is still cleaned up); a duplicate is skipped with a warning.
 */
const registerTools = (
  registry: ToolRegistryShape,
  session: McpSession,
  registered: Ref.Ref<ReadonlyArray<string>>,
  resultMaxChars: number
) =>
  Effect.forEach(
    session.tools,
    (info) =>
      registry
        .register(makeMcpTool({ info, scope: "global", server: session.server, execute: executeGlobal(session, info, resultMaxChars) }))
        .pipe(
          Effect.andThen(Ref.update(registered, (names) => [...names, info.declaredName])),
          Effect.catch((error) =>
            Effect.logWarning(`Global MCP tool '${info.declaredName}' of '${session.server}' skipped: ${error.message}`)
          )
        ),
    { discard: true }
  )

/** How one server's start-up goes, for the wait in front of the first turn. */
interface StartupSignals {
  /** Done when the first connect attempt has ended (connected or failed). */
  readonly firstAttempt: Deferred.Deferred<void>
  /** Done when the first attempt's outcome is in the registry: its tools registered, or it failed. */
  readonly firstApplied: Deferred.Deferred<void>
  /** Done when start-up stopped waiting; a server connecting after that "joins late". */
  readonly waitOver: Deferred.Deferred<void>
  /** The registry the tools go to, once the app has one (`GlobalMcpServersLive` attaches it). */
  readonly registry: Deferred.Deferred<ToolRegistryShape>
}

/**
 * One server's life: connect (retrying with backoff), register its tools, and when the
 * connection drops, unregister them and start over. Interruption (layer shutdown) unregisters
 * the tools and closes the client.
 */
const serveForever = (server: GlobalMcpServerConfig, resultMaxChars: number, signals: StartupSignals) =>
  Effect.gen(function* () {
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    const target = server.url === undefined ? undefined : new URL(server.url)
    const label = serverLabel(server.name, target)
    const everConnected = yield* Ref.make(false)
    const firstEnded = Deferred.succeed(signals.firstAttempt, undefined)
    const connect = connectInOrder(server.name, globalTransportPlan(server), {
      timeout: GLOBAL_CONNECT_TIMEOUT,
      limits: GLOBAL_DISCOVERY_LIMITS,
      target
    }).pipe(
      Effect.tap(() => firstEnded),
      Effect.tapError((error) =>
        Effect.all([Effect.logWarning(`${error.message}; retrying`), firstEnded, Deferred.succeed(signals.firstApplied, undefined)])
      ),
      Effect.retry(retrySchedule)
    )
    /** Holds the session until its connection closes; tools registered meanwhile are tracked for cleanup. */
    const holdSession = (session: McpSession, registered: Ref.Ref<ReadonlyArray<string>>) =>
      Effect.gen(function* () {
        const closed = yield* Deferred.make<void>()
        session.client.onclose = () => {
          runFork(Deferred.succeed(closed, undefined))
        }
        const registry = yield* Deferred.await(signals.registry)
        yield* registerTools(registry, session, registered, resultMaxChars)
        const names = yield* Ref.get(registered)
        // The first connection after start-up stopped waiting: earlier turns lacked these tools.
        const connectedBefore = yield* Ref.getAndSet(everConnected, true)
        const late = !connectedBefore && (yield* Deferred.isDone(signals.waitOver))
        const connected = `Global MCP server ${label} connected over ${session.transport}: ${names.join(", ") || "no tools"}`
        yield* late
          ? Effect.logWarning(`${connected} (after the start-up wait: turns before now did not have these tools)`)
          : Effect.logInfo(connected)
        yield* Deferred.succeed(signals.firstApplied, undefined)
        yield* Deferred.await(closed)
      })

    const release = (session: McpSession, registered: Ref.Ref<ReadonlyArray<string>>) =>
      Deferred.poll(signals.registry).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.void,
          onSome: (attached) =>
            Effect.flatMap(attached, (registry) =>
              Ref.get(registered).pipe(Effect.flatMap((names) => Effect.forEach(names, (name) => registry.unregister(name), { discard: true })))
            )
        })),
        Effect.andThen(session.close)
      )

    // The connect stays interruptible; once a session exists, its cleanup always runs.
    const serveOnce = Effect.uninterruptibleMask((restore) =>
      Effect.gen(function* () {
        const session = yield* restore(connect)
        const registered = yield* Ref.make<ReadonlyArray<string>>([])
        yield* restore(holdSession(session, registered)).pipe(Effect.ensuring(release(session, registered)))
        yield* Effect.logWarning(`Global MCP server ${label} disconnected; reconnecting`)
      })
    ).pipe(Effect.andThen(Effect.sleep(RECONNECT_PAUSE)))
    return yield* Effect.forever(serveOnce)
  }).pipe(Effect.annotateLogs({ mcpServer: server.name }))

/**
 * The connections to the `MCP_SERVERS` servers. Building it starts every server and waits for each
 * one's first connect attempt, at most `MCP_STARTUP_WAIT_MS` (docs/architecture.md, Global MCP
 * servers are ready before the first turn); a slower server joins later, with a warning. It needs
 * no registry, so a front can wait for it before it opens (the Discord bot logs in after it);
 * `GlobalMcpServersLive` then hands the tools to the ToolRegistry. Clients close when the layer's
 * scope closes.
 */
export class GlobalMcpConnections extends Context.Service<GlobalMcpConnections, {
  /** Registers every connected server's tools (and later ones as they connect); returns once the in-time ones are in. */
  readonly attach: (registry: ToolRegistryShape) => Effect.Effect<void>
}>()("loopcord/mcp/GlobalMcpConnections") {
  static readonly layer: Layer.Layer<GlobalMcpConnections, never, McpConfig> = Layer.effect(
    GlobalMcpConnections,
    Effect.gen(function* () {
      const settings = yield* McpConfig
      const waitOver = yield* Deferred.make<void>()
      const registry = yield* Deferred.make<ToolRegistryShape>()
      const starting = yield* Effect.forEach(settings.globalServers, (server) =>
        Effect.gen(function* () {
          const signals: StartupSignals = {
            firstAttempt: yield* Deferred.make<void>(),
            firstApplied: yield* Deferred.make<void>(),
            waitOver,
            registry
          }
          yield* Effect.forkScoped(serveForever(server, settings.resultMaxChars, signals))
          return { server, signals }
        })
      )
      const waitMs = Duration.toMillis(settings.startupWait)
      yield* Effect.forEach(starting, ({ signals }) => Deferred.await(signals.firstAttempt), { concurrency: "unbounded", discard: true }).pipe(
        Effect.timeout(settings.startupWait),
        Effect.catchTag("TimeoutError", () =>
          Effect.forEach(starting, ({ server, signals }) =>
            Effect.flatMap(Deferred.isDone(signals.firstAttempt), (done) =>
              done
                ? Effect.void
                : Effect.logWarning(
                  `Global MCP server ${serverLabel(server.name, server.url)} is still connecting after MCP_STARTUP_WAIT_MS=${waitMs}; its tools join when it connects`
                )
            ), { discard: true })
        ),
        Effect.ensuring(Deferred.succeed(waitOver, undefined))
      )
      const attach = (target: ToolRegistryShape) =>
        Effect.gen(function* () {
          yield* Deferred.succeed(registry, target)
          // Servers whose first attempt ended in time are registered before the first turn.
          yield* Effect.forEach(starting, ({ signals }) =>
            Effect.flatMap(Deferred.isDone(signals.firstAttempt), (done) => (done ? Deferred.await(signals.firstApplied) : Effect.void)), { discard: true })
        })
      return { attach }
    })
  )
}

/**
 * Global MCP servers from `MCP_SERVERS`: the connections (built with their start-up wait, shared
 * with any front that waits for them) and their tools in the ToolRegistry as
 * `{ kind: "mcp", scope: "global" }` tools, so `--once` and the first Discord message see every
 * server that connected in time.
 */
export const GlobalMcpServersLive: Layer.Layer<never, never, McpConfig | ToolRegistry> = Layer.effectDiscard(
  Effect.gen(function* () {
    const connections = yield* GlobalMcpConnections
    yield* connections.attach(yield* ToolRegistry)
  })
).pipe(Layer.provide(GlobalMcpConnections.layer))
