/**
 * The client under test for the MCP conformance suite (`@modelcontextprotocol/conformance
 * client --command "node --import tsx test/mcp/conformance/conformanceClient.ts"`). The suite
 * appends its server URL as the last argument and names the scenario in
 * MCP_CONFORMANCE_SCENARIO. Everything goes through loopcord's guild MCP stack: the guarded
 * fetch, the pool (fresh client, transport fallback, Clock deadline), the exposure rules and
 * the tool adapter, dispatched by the real ToolRegistry.
 */
import { Console, Effect, Layer } from "effect"
import { McpConfig } from "../../../src/config/McpConfig"
import { AddressPolicy } from "../../../src/fetch/AddressPolicy"
import { DnsResolver } from "../../../src/fetch/DnsResolver"
import { GuildMcpAddressPolicy } from "../../../src/mcp/GuildMcpAddressPolicy"
import { GuildMcpHttp } from "../../../src/mcp/GuildMcpHttp"
import { GuildMcpPool } from "../../../src/mcp/GuildMcpPool"
import { GuildMcpTools } from "../../../src/mcp/GuildMcpTools"
import { InMemoryGuildMcpRegistry } from "../../../src/mcp/InMemoryGuildMcpRegistry"
import { ToolRegistry } from "../../../src/tools/ToolRegistry"
import { loopbackConnector } from "../../support/fakeWeb/loopbackConnector"
import { guildServer, guildTurn, makeToolContext, provideToolContext } from "../../support/mcpServers/mcpTestKit"

const serverUrl = process.argv[process.argv.length - 1] ?? ""
const scenario = process.env["MCP_CONFORMANCE_SCENARIO"] ?? "initialize"

const registration = guildServer({ guildId: "guild-1", name: "conformance", url: serverUrl })

// Loopback only, whatever the URL says: the socket connector refuses anything else.
const policy = AddressPolicy.make({ allowPrivateNetwork: true }).pipe(Layer.provide(DnsResolver.system))
const guildPolicy = GuildMcpAddressPolicy.make({ allowPrivateNetwork: true }).pipe(Layer.provide(DnsResolver.system))
const config = McpConfig.make()
const http = GuildMcpHttp.guarded.pipe(Layer.provide(Layer.mergeAll(guildPolicy, loopbackConnector().layer, config)))
const pool = GuildMcpPool.Default.pipe(Layer.provide(Layer.merge(http, config)))
const guild = GuildMcpTools.Default.pipe(
  Layer.provideMerge(Layer.mergeAll(pool, InMemoryGuildMcpRegistry.make([registration]), policy, guildPolicy, config))
)
const app = ToolRegistry.layer.pipe(Layer.provide(GuildMcpTools.toolSource), Layer.provideMerge(guild))

const program = Effect.gen(function* () {
  const registry = yield* ToolRegistry
  const declared = yield* registry.toolsForTurn(guildTurn)
  const status = yield* Effect.flatMap(GuildMcpPool, (connections) => connections.status("guild-1", "conformance"))
  if (status._tag !== "Connected") return yield* Effect.die(new Error(`not connected: ${status._tag}`))
  yield* Console.error(`connected over ${status.transport}; tools: ${declared.map((tool) => tool.name).join(", ") || "(none)"}`)
  // Negative control for the suite's own test: a client that never calls the tool must fail.
  if (scenario === "tools_call" && process.env["LOOPCORD_CONFORMANCE_SKIP_CALL"] !== "1") {
    const { context } = yield* makeToolContext()
    const result = yield* registry.execute("add_numbers", { a: 5, b: 3 }).pipe(provideToolContext(context))
    if (!result.success) return yield* Effect.die(new Error(`add_numbers failed: ${result.error ?? "?"}`))
    yield* Console.log(JSON.stringify(result.data))
  }
})

Effect.runPromiseExit(Effect.scoped(Effect.provide(program, app))).then((exit) => {
  if (exit._tag === "Failure") console.error(String(exit.cause))
  process.exit(exit._tag === "Success" ? 0 : 1)
})
