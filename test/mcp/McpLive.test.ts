import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { McpConfig } from "../../src/config/McpConfig"
import { AddressPolicy } from "../../src/fetch/AddressPolicy"
import { DnsResolver } from "../../src/fetch/DnsResolver"
import { GuildMcpAddressPolicy } from "../../src/mcp/GuildMcpAddressPolicy"
import { InMemoryGuildMcpRegistry } from "../../src/mcp/InMemoryGuildMcpRegistry"
import { GlobalMcpServersLive, GuildMcpLive, GuildToolSourceLive } from "../../src/mcp/McpLive"
import { GuildMcpAdmin } from "../../src/mcp/GuildMcpAdmin"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { loopbackConnector } from "../support/fakeWeb/loopbackConnector"
import { startStreamableServer } from "../support/mcpServers/httpServers"
import { eventually, guildTurn, serve } from "../support/mcpServers/mcpTestKit"
import { text } from "../support/mcpServers/testTools"

describe("McpLive (composition root wiring)", () => {
  it.effect("global and guild MCP tools reach the registry through the layers main.ts wires", () =>
    Effect.gen(function* () {
      const globalServer = yield* serve(() => startStreamableServer({ tools: [{ name: "global_lookup", run: async () => text("g") }] }))
      const guildServer = yield* serve(() => startStreamableServer({ tools: [{ name: "guild_lookup", run: async () => text("l") }] }))
      const config = McpConfig.make({ globalServers: [{ name: "global", url: globalServer.url, transport: "streamable-http", args: [] }] })
      const policy = AddressPolicy.make({ allowPrivateNetwork: true }).pipe(Layer.provide(DnsResolver.fromTable({})))
      const guildPolicy = GuildMcpAddressPolicy.make({ allowPrivateNetwork: true }).pipe(Layer.provide(DnsResolver.fromTable({})))
      const mcp = GuildMcpLive.pipe(
        Layer.provide(Layer.mergeAll(config, policy, guildPolicy, loopbackConnector().layer, InMemoryGuildMcpRegistry.layer))
      )
      const tools = ToolRegistry.layer.pipe(Layer.provide(GuildToolSourceLive), Layer.provideMerge(mcp))
      const app = Layer.merge(tools, GlobalMcpServersLive.pipe(Layer.provide(Layer.merge(tools, config))))

      const declared = yield* Effect.gen(function* () {
        yield* Effect.flatMap(GuildMcpAdmin, (admin) =>
          admin.add({ guildId: "guild-1", name: "local", url: guildServer.url, type: "generic", addedBy: "admin-1" })
        )
        const registry = yield* ToolRegistry
        return yield* eventually(registry.toolsForTurn(guildTurn), (found) => found.length === 2, "both tools")
      }).pipe(Effect.provide(app))
      assert.deepStrictEqual(
        declared.map((tool) => [tool.name, tool.source]),
        [
          ["global_lookup", { kind: "mcp", scope: "global", server: "global" }],
          ["guild_lookup", { kind: "mcp", scope: "guild", server: "local" }]
        ]
      )
    })
  )
})
