import { assert, describe, it } from "@effect/vitest"
import { Effect, Result } from "effect"
import { AddressPolicy } from "../../src/fetch/AddressPolicy"
import { DnsLookupError, type DnsResolverShape, makeSystemResolver } from "../../src/fetch/DnsResolver"
import { GuildMcpAdmin, type AddGuildMcpServer } from "../../src/mcp/GuildMcpAdmin"
import { GuildMcpPool } from "../../src/mcp/GuildMcpPool"
import { GuildMcpTools } from "../../src/mcp/GuildMcpTools"
import { startStreamableServer } from "../support/mcpServers/httpServers"
import { guildMcpLayer, makeToolContext, provideToolContext, serve } from "../support/mcpServers/mcpTestKit"
import { makeLogCapture } from "../support/tools/logCapture"

/** A pretend-public address: fake DNS answers it, the test connector maps it to loopback. */
const PUBLIC_IP = "93.184.215.14"

const request = (url: string, name = "tools"): AddGuildMcpServer => ({ guildId: "guild-1", name, url, type: "generic", addedBy: "admin-1" })

const refusal = (url: string) =>
  Effect.flatMap(GuildMcpAdmin, (admin) => Effect.result(admin.add(request(url)))).pipe(
    Effect.map((result) => (Result.isFailure(result) ? result.failure : undefined))
  )

describe("guild MCP address policy (design decision 13)", () => {
  it.effect("a default install (no RUN_ENV, no opt-in) refuses a loopback /mcp add before any request", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const stack = guildMcpLayer({ env: {} })
      const refused = yield* refusal(server.url).pipe(Effect.provide(stack.layer))
      assert.strictEqual(refused?.reason, "private_address")
      assert.include(refused?.message ?? "", "GUILD_MCP_ALLOW_PRIVATE_NETWORK=true")
      assert.strictEqual(server.log.requests.length, 0)
      assert.strictEqual(stack.connector.attempts.length, 0)
    })
  )

  it.effect("RUN_ENV=development and FETCH_URL_ALLOW_PRIVATE_NETWORK=true open fetch_url, not guild MCP", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const stack = guildMcpLayer({ env: { RUN_ENV: "development", FETCH_URL_ALLOW_PRIVATE_NETWORK: "true" } })
      const { fetchAllowed, refused } = yield* Effect.gen(function* () {
        const fetchAllowed = yield* Effect.result(Effect.flatMap(AddressPolicy, (policy) => policy.validate(server.url)))
        return { fetchAllowed, refused: yield* refusal(server.url) }
      }).pipe(Effect.provide(stack.layer))
      assert.isTrue(Result.isSuccess(fetchAllowed), "fetch_url's policy follows its own opt-in")
      assert.strictEqual(refused?.reason, "private_address")
      assert.strictEqual(server.log.requests.length, 0)
    })
  )

  it.effect("GUILD_MCP_ALLOW_PRIVATE_NETWORK=true lets a loopback server be added and used", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      const session = yield* Effect.gen(function* () {
        const config = yield* Effect.flatMap(GuildMcpAdmin, (admin) => admin.add(request(server.url)))
        return yield* Effect.flatMap(GuildMcpPool, (pool) => pool.session(config))
      }).pipe(Effect.provide(guildMcpLayer({ env: { GUILD_MCP_ALLOW_PRIVATE_NETWORK: "true" } }).layer))
      assert.include(session.tools.map((tool) => tool.mcpName), "echo")
    })
  )

  it.effect("private, mapped, encoded, link-local and private-resolving URLs are refused at /mcp add; nothing is stored or dialed", () =>
    Effect.gen(function* () {
      const resolver = yield* makeSystemResolver({
        // Names resolve through this table; `localhost` must never reach it.
        query: (host) => {
          const table: Record<string, ReadonlyArray<string>> = {
            "intranet.example": ["10.0.0.5"],
            "mixed.example": [PUBLIC_IP, "127.0.0.1"],
            "mapped.example": ["::ffff:192.168.0.10"],
            "nat64.example": ["64:ff9b::7f00:1"],
            "metadata.example": ["169.254.169.254"]
          }
          const answers = table[host]
          if (answers === undefined) return Promise.reject(Object.assign(new Error("not found"), { code: "ENOTFOUND" }))
          return Promise.resolve(answers.map((address) => ({ address, family: address.includes(":") ? 6 as const : 4 as const })))
        },
        hosts: Effect.succeed(new Map())
      })
      const stack = guildMcpLayer({ allowPrivateNetwork: false, resolver })
      const urls = [
        "http://10.1.2.3/mcp",
        "http://192.168.1.1/mcp",
        "http://172.16.0.1/mcp",
        "http://100.64.0.1/mcp",
        "http://0.0.0.0/mcp",
        "http://[::1]:8080/mcp",
        "http://[::ffff:127.0.0.1]/mcp",
        "http://[::ffff:7f00:1]/mcp",
        "http://[::127.0.0.1]/mcp",
        "http://0x7f000001/mcp",
        "http://2130706433/mcp",
        "http://127.1/mcp",
        "http://[fd00::1]/mcp",
        "http://[fe80::1]/mcp",
        "http://169.254.169.254/latest",
        "http://metadata.google.internal/mcp",
        "http://intranet.example/mcp",
        "http://mixed.example/mcp",
        "http://mapped.example/mcp",
        "http://nat64.example/mcp",
        "http://metadata.example/mcp",
        "http://localhost:8080/mcp",
        "http://api.localhost/mcp",
        "http://LOCALHOST./mcp"
      ]
      const outcomes = yield* Effect.forEach(urls, (url) => Effect.map(refusal(url), (error) => [url, error?.reason] as const)).pipe(
        Effect.provide(stack.layer)
      )
      assert.deepStrictEqual(outcomes, urls.map((url) => [url, "private_address"] as const))
      assert.strictEqual(stack.connector.attempts.length, 0)
      const named = yield* refusal("http://intranet.example/mcp").pipe(Effect.provide(stack.layer))
      assert.strictEqual(named?.message.startsWith("Refused: intranet.example resolves to a private network (RFC 1918) address."), true)
      assert.notInclude(named?.message ?? "", "10.0.0.5", "a host name's address is not echoed to the guild")
    })
  )

  it.effect("DNS rebinding: public at /mcp add, loopback at connect time: refused before a socket, the guild sees only 'unreachable'", () =>
    Effect.gen(function* () {
      const server = yield* serve(() => startStreamableServer())
      let rebound = false
      const resolver: DnsResolverShape = {
        lookup: (host) =>
          host === "rebind.example"
            ? Effect.succeed([{ address: rebound ? "127.0.0.1" : PUBLIC_IP, family: 4 as const }])
            : Effect.fail(new DnsLookupError({ host, reason: "ENOTFOUND" }))
      }
      const stack = guildMcpLayer({ allowPrivateNetwork: false, resolver, translate: { [PUBLIC_IP]: "127.0.0.1" } })
      const logs = yield* makeLogCapture
      const outcome = yield* logs.capture(
        Effect.gen(function* () {
          const admin = yield* GuildMcpAdmin
          yield* admin.add(request(`http://rebind.example:${server.port}/mcp`, "rebind"))
          // While the name is public the server connects; its tool objects are kept for the retry below.
          const [tool] = (yield* Effect.flatMap(GuildMcpTools, (tools) => tools.forGuild("guild-1"))).tools
          const dialedWhilePublic = stack.connector.attempts.length
          rebound = true
          yield* admin.disable("guild-1", "rebind")
          yield* admin.enable("guild-1", "rebind")
          const { context } = yield* makeToolContext()
          const result = yield* Effect.result(tool === undefined ? Effect.die(new Error("no tool")) : tool.execute({ text: "x" }).pipe(provideToolContext(context)))
          const [view] = yield* admin.list("guild-1")
          return { result, view, dialedWhilePublic }
        }).pipe(Effect.provide(stack.layer))
      )
      assert.isAbove(outcome.dialedWhilePublic, 0)
      assert.strictEqual(stack.connector.attempts.length, outcome.dialedWhilePublic, "no socket once the name points at loopback")
      assert.isTrue(Result.isFailure(outcome.result))
      const shown = Result.isFailure(outcome.result) ? outcome.result.failure.message : ""
      assert.include(shown, "MCP server 'rebind' is unreachable right now.")
      assert.notInclude(shown, "127.0.0.1")
      assert.notInclude(shown, "loopback")
      assert.strictEqual(outcome.view?.connection._tag, "Quarantined")
      // The reason is for the operator: it is in the logs.
      const failed = yield* logs.matching("failed to connect")
      assert.include(failed[0]?.cause ?? "", "address 127.0.0.1 is loopback")
    })
  )
})
