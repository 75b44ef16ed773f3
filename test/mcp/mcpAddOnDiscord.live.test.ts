import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { type DnsResolverShape, makeSystemResolver } from "../../src/fetch/DnsResolver"
import { reply } from "../../src/provider/scripted/Script"
import { botHarness } from "../discord/botHarness"
import { Permission, waitUntil } from "../support/fakeDiscord"
import { startStreamableServer } from "../support/mcpServers/httpServers"
import { serve } from "../support/mcpServers/mcpTestKit"

/** A pretend-public address for `tools.example` (never dialed: nothing here connects). */
const PUBLIC_IP = "93.184.215.14"

describe("/mcp add on the fake Discord, default install (decision 13, issue 12)", () => {
  it.live("a loopback URL is refused with a clear message and the loopback server sees no request; /mcp list shows origins only", () =>
    Effect.gen(function*() {
      const server = yield* serve(() => startStreamableServer())
      // The production resolver (localhost, /etc/hosts, c-ares), plus one pretend-public name.
      const system = yield* makeSystemResolver()
      const resolver: DnsResolverShape = {
        lookup: (host) => (host === "tools.example" ? Effect.succeed([{ address: PUBLIC_IP, family: 4 as const }]) : system.lookup(host))
      }
      // `env: {}`: McpConfig and both address policies read from an empty environment (no RUN_ENV).
      const { fake } = yield* botHarness({ script: () => reply("ok"), guildMcp: { env: {}, resolver } })
      const admin = { permissions: Permission.ManageGuild }
      const ask = (options: Record<string, string>) => {
        const interaction = fake.slash("mcp", { ...admin, subcommand: "add", options })
        return Effect.as(waitUntil(fake, `/mcp add ${options["url"]}`, () => interaction.original !== undefined), interaction)
      }

      const literal = yield* ask({ name: "local", url: server.url })
      assert.strictEqual(
        literal.original?.content,
        "⚠️ Refused: 127.0.0.1 is a loopback (RFC 1122) address. Guild MCP servers must be on the public internet (the bot's operator can allow private networks with GUILD_MCP_ALLOW_PRIVATE_NETWORK=true)."
      )
      const named = yield* ask({ name: "local", url: `http://localhost:${server.port}/mcp` })
      assert.include(named.original?.content ?? "", "Refused: localhost resolves to a loopback")
      assert.strictEqual(server.log.requests.length, 0, "the loopback server saw no request")

      const added = yield* ask({ name: "search", url: "https://tools.example/v1/s3cr3t-path-key/mcp?token=s3cr3t-query" })
      assert.include(added.original?.content ?? "", "Added MCP server **search**")
      const list = fake.slash("mcp", { ...admin, subcommand: "list" })
      yield* waitUntil(fake, "/mcp list", () => list.original !== undefined)
      assert.include(list.original?.content ?? "", "**search** (generic) https://tools.example: not connected yet")
      assert.notInclude(list.original?.content ?? "", "s3cr3t")
      assert.notInclude(list.original?.content ?? "", "local")
    }))
})
