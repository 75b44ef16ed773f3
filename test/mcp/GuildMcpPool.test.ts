import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { GuildMcpPool } from "../../src/mcp/GuildMcpPool"
import {
  deadPortUrl,
  startDroppingServer,
  startHangingServer,
  startSseServer,
  startStreamableServer
} from "../support/mcpServers/httpServers"
import { guildMcpLayer, guildServer, serve, waitUntil } from "../support/mcpServers/mcpTestKit"

const posts = (log: { readonly requests: ReadonlyArray<{ readonly method: string }> }) =>
  log.requests.filter((request) => request.method === "POST").length
const gets = (log: { readonly requests: ReadonlyArray<{ readonly method: string }> }) =>
  log.requests.filter((request) => request.method === "GET").length

describe("GuildMcpPool", () => {
  it.effect("connects over Streamable HTTP, pools the session and reuses it", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      const first = yield* pool.session(config)
      const second = yield* pool.session(config)
      assert.strictEqual(first.transport, "streamable-http")
      assert.strictEqual(first, second)
      assert.deepStrictEqual(first.tools.map((tool) => tool.mcpName), ["echo", "add_numbers", "explode", "structured", "slow"])
      assert.strictEqual(server.log.initializes, 1)
      const status = yield* pool.status("guild-1", "tools")
      assert.strictEqual(status._tag, "Connected")
      // [88] the connect deadline does not outlive the connect: 15 s later the session is untouched.
      yield* TestClock.adjust(Duration.seconds(15))
      assert.strictEqual(yield* pool.session(config), first)
      assert.strictEqual(server.log.abandonedRequests, 0)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[87] Streamable HTTP answers 4xx, SSE succeeds: a second, fresh client is used and the SSE one is pooled", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startSseServer())
      const pool = yield* GuildMcpPool
      const session = yield* pool.session(guildServer({ url: server.url }))
      assert.strictEqual(session.transport, "sse")
      // The pooled client carries the SSE transport; re-using the Streamable attempt's client would
      // have failed with the SDK's "Already connected to a transport".
      assert.isTrue(session.client.transport instanceof SSEClientTransport)
      const [post, get] = server.log.requests
      assert.strictEqual(post?.method, "POST")
      assert.strictEqual(get?.method, "GET")
      assert.strictEqual(server.log.initializes, 1)
      assert.strictEqual(yield* pool.session(guildServer({ url: server.url })), session)
      const status = yield* pool.status("guild-1", "tools")
      assert.isTrue(status._tag === "Connected" && status.transport === "sse")
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[88] a Streamable HTTP server that hangs fails after exactly the connect timeout, with no SSE attempt", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startHangingServer())
      const pool = yield* GuildMcpPool
      const fiber = yield* Effect.forkChild(pool.session(guildServer({ url: server.url })))
      yield* waitUntil(() => server.log.requests.length === 1, "the initialize POST")
      yield* TestClock.adjust(Duration.millis(14_999))
      assert.isUndefined(fiber.pollUnsafe(), "still connecting 1 ms before the timeout")
      yield* TestClock.adjust(Duration.millis(1))
      const exit = yield* Fiber.await(fiber)
      assert.isTrue(Exit.isFailure(exit))
      const error = Exit.isFailure(exit) ? exit.cause : undefined
      assert.include(String(error), "no answer within 15000 ms")
      // Timeouts are "server down", not a hint to try SSE.
      assert.strictEqual(gets(server.log), 0)
      // The abandoned request was closed by the client.
      yield* waitUntil(() => server.log.abandonedRequests === 1, "the hanging POST to be closed")
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Quarantined")
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[88] an SSE server that never sends its endpoint event fails after the connect timeout and the stream is closed", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startHangingServer({ postStatus: 405 }))
      const pool = yield* GuildMcpPool
      const fiber = yield* Effect.forkChild(Effect.result(pool.session(guildServer({ url: server.url }))))
      yield* waitUntil(() => gets(server.log) === 1, "the SSE GET")
      yield* TestClock.adjust(Duration.millis(14_999))
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust(Duration.millis(1))
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result))
      if (Result.isFailure(result) && result.failure._tag === "McpConnectError") {
        assert.deepStrictEqual(
          result.failure.attempts.map((attempt) => [attempt.transport, attempt.reason]),
          [["streamable-http", "http"], ["sse", "timeout"]]
        )
      } else {
        assert.fail(`expected McpConnectError, got ${String(result)}`)
      }
      yield* waitUntil(() => server.log.abandonedRequests === 1, "the SSE stream to be closed")
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("one connect in flight per key: concurrent callers share it", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startHangingServer())
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      const fibers = yield* Effect.forEach([1, 2, 3, 4, 5], () => Effect.forkChild(Effect.result(pool.session(config))))
      yield* waitUntil(() => server.log.requests.length === 1, "the first POST")
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Connecting")
      yield* TestClock.adjust(Duration.seconds(15))
      const results = yield* Effect.forEach(fibers, Fiber.join)
      assert.isTrue(results.every(Result.isFailure))
      assert.strictEqual(posts(server.log), 1)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("concurrent callers of a healthy server share one session (one initialize)", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      const sessions = yield* Effect.forEach([1, 2, 3, 4, 5], () => pool.session(config), { concurrency: "unbounded" })
      assert.isTrue(sessions.every((session) => session === sessions[0]))
      assert.strictEqual(server.log.initializes, 1)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("a caller killed while waiting does not cancel the shared attempt", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      const first = yield* Effect.forkChild(pool.session(config))
      yield* Fiber.interrupt(first)
      const session = yield* pool.session(config)
      assert.strictEqual(session.transport, "streamable-http")
      assert.strictEqual(server.log.initializes, 1)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[85] a failed server is not dialed again before the cooldown; exactly one attempt right after it", () =>
    Effect.gen(function* () {
      const server = yield* serve(startDroppingServer)
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      const first = yield* Effect.result(pool.session(config))
      assert.isTrue(Result.isFailure(first) && first.failure._tag === "McpConnectError")
      assert.strictEqual(server.connections(), 1)

      yield* TestClock.adjust(Duration.millis(299_999))
      const held = yield* Effect.result(pool.session(config))
      assert.isTrue(Result.isFailure(held) && held.failure._tag === "McpQuarantinedError")
      assert.strictEqual(server.connections(), 1)

      yield* TestClock.adjust(Duration.millis(1))
      const retried = yield* Effect.result(pool.session(config))
      assert.isTrue(Result.isFailure(retried) && retried.failure._tag === "McpConnectError")
      assert.strictEqual(server.connections(), 2)
      const again = yield* Effect.result(pool.session(config))
      assert.isTrue(Result.isFailure(again) && again.failure._tag === "McpQuarantinedError")
      assert.strictEqual(server.connections(), 2)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[85] a dead server is dialed once per cooldown window over a simulated hour (1 turn every 10 s)", () =>
    Effect.gen(function* () {
      const dropping = yield* serve(startDroppingServer)
      const refused = yield* Effect.promise(deadPortUrl)
      const pool = yield* GuildMcpPool
      const droppingConfig = guildServer({ name: "dropping", url: dropping.url })
      const refusedConfig = guildServer({ name: "refused", url: refused })
      let quarantined = 0
      let attempts = 0
      for (let turn = 0; turn < 360; turn++) {
        for (const config of [droppingConfig, refusedConfig]) {
          const result = yield* Effect.result(pool.session(config))
          if (Result.isFailure(result) && result.failure._tag === "McpQuarantinedError") quarantined++
          else if (config === refusedConfig) attempts++
        }
        yield* TestClock.adjust(Duration.seconds(10))
      }
      // 60 min / 5 min cooldown = 12 windows: t = 0, 300, …, 3300 s.
      assert.strictEqual(dropping.connections(), 12)
      assert.strictEqual(attempts, 12)
      assert.strictEqual(quarantined, 2 * (360 - 12))
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[85] the quarantine is cleared by a successful connect: a later failure gets a fresh cooldown", () =>
    Effect.gen(function* () {
      const dropping = yield* serve(startDroppingServer)
      const healthy = yield* serve(() => startStreamableServer())
      const pool = yield* GuildMcpPool
      const down = guildServer({ url: dropping.url })
      assert.isTrue(Result.isFailure(yield* Effect.result(pool.session(down))))
      yield* TestClock.adjust(Duration.minutes(5))
      // The admin fixed the URL meanwhile (same name, new URL): one attempt, it succeeds.
      const session = yield* pool.session(guildServer({ url: healthy.url }))
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Connected")
      yield* pool.invalidate(guildServer({ url: healthy.url }), session)
      yield* TestClock.adjust(Duration.seconds(10))
      // Back to the broken URL 10 s later: dialed at once (no stale quarantine), then held again.
      assert.isTrue(Result.isFailure(yield* Effect.result(pool.session(down))))
      assert.strictEqual(dropping.connections(), 2)
      const status = yield* pool.status("guild-1", "tools")
      assert.isTrue(status._tag === "Quarantined")
      if (status._tag === "Quarantined") assert.strictEqual(status.until, 310_000 + 300_000)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("[86] disconnect (remove/disable) clears the quarantine at once", () =>
    Effect.gen(function* () {
      const server = yield* serve(startDroppingServer)
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      yield* Effect.result(pool.session(config))
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Quarantined")
      yield* pool.disconnect("guild-1", "tools")
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Idle")
      yield* TestClock.adjust(Duration.seconds(1))
      yield* Effect.result(pool.session(config))
      assert.strictEqual(server.connections(), 2)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("disconnect during a connect abandons it: waiters fail, the late client is closed, nothing is pooled", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startHangingServer())
      const pool = yield* GuildMcpPool
      const fiber = yield* Effect.forkChild(Effect.result(pool.session(guildServer({ url: server.url }))))
      yield* waitUntil(() => server.log.requests.length === 1, "the POST")
      yield* pool.disconnect("guild-1", "tools")
      const result = yield* Fiber.join(fiber)
      assert.isTrue(Result.isFailure(result) && result.failure._tag === "McpServerUnavailableError")
      yield* TestClock.adjust(Duration.seconds(15))
      // The abandoned attempt's failure must not re-quarantine a removed server.
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Idle")
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )

  it.effect("idle connections are evicted after the TTL, swept every 60 s; the next use reconnects", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const pool = yield* GuildMcpPool
      const config = guildServer({ url: server.url })
      yield* pool.session(config)
      yield* TestClock.adjust(Duration.minutes(9))
      yield* pool.session(config) // used at t = 540 s
      yield* TestClock.adjust(Duration.seconds(599))
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Connected", "idle 599 s")
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual((yield* pool.status("guild-1", "tools"))._tag, "Idle", "evicted by the sweep at t = 1140 s")
      assert.strictEqual(server.log.initializes, 1)
      yield* pool.session(config)
      assert.strictEqual(server.log.initializes, 2)
    }).pipe(Effect.provide(guildMcpLayer().layer))
  )
})
