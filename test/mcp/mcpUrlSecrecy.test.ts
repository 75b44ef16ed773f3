import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Result, Layer } from "effect"
import { TestClock } from "effect/testing"
import { McpConfig } from "../../src/config/McpConfig"
import { GlobalMcpServersLive } from "../../src/mcp/GlobalMcpServers"
import { GuildMcpAdmin } from "../../src/mcp/GuildMcpAdmin"
import { GuildMcpPool } from "../../src/mcp/GuildMcpPool"
import { redactUrl, serverLabel } from "../../src/mcp/serverLabel"
import { GuildToolSource } from "../../src/tools/GuildToolSource"
import { ToolRegistry } from "../../src/tools/ToolRegistry"
import { startHostileServer } from "../support/mcpServers/hostileServer"
import { eventually, guildServer, makeToolContext, provideToolContext, registryWithGuildMcp, serve } from "../support/mcpServers/mcpTestKit"
import { makeLogCapture } from "../support/tools/logCapture"

/** Some services put the key in the path, some in the query: both must stay out of sight. */
const secretUrl = (port: number) => `http://127.0.0.1:${port}/v1/sk-live-PATHSECRET42/mcp?api_key=QUERYSECRET77&team=core`
const SECRETS = ["PATHSECRET42", "QUERYSECRET77", "sk-live", "api_key"]

const assertNoSecret = (what: string, text: string) => {
  for (const secret of SECRETS) assert.notInclude(text, secret, `${what} leaks ${secret}`)
}

describe("MCP server URLs: name and origin only (issue 12 item 5)", () => {
  it("redactUrl removes the path, the query and long segments in raw and decoded form; serverLabel names the origin", () => {
    const url = new URL("https://mcp.example/v1/sk-live-KEY123456/mcp?token=a%2Fb%2Fsecret99")
    const text = `POST ${url.href} failed; path /v1/sk-live-KEY123456/mcp; key sk-live-KEY123456; token a/b/secret99 or a%2Fb%2Fsecret99`
    const redacted = redactUrl(text, url)
    assert.notInclude(redacted, "KEY123456")
    assert.notInclude(redacted, "secret99")
    assert.include(redacted, "POST https://mcp.example failed")
    assert.strictEqual(redactUrl("nothing here", undefined), "nothing here")
    assert.strictEqual(serverLabel("search", url), "'search' (https://mcp.example)")
    assert.strictEqual(serverLabel("local", undefined), "'local'")
  })

  it.effect("a guild server's failing call, connect errors, logs and /mcp list never show the path or query", () =>
    Effect.gen(function* () {
      const onCall = yield* serve(() => startHostileServer("echoPathOnCall"))
      const always = yield* serve(() => startHostileServer("echoPathAlways"))
      const registrations = [guildServer({ name: "leaky", url: secretUrl(onCall.port) }), guildServer({ name: "broken", url: secretUrl(always.port) })]
      const logs = yield* makeLogCapture
      const { connect, listed, result } = yield* logs.capture(
        Effect.gen(function* () {
          const { context } = yield* makeToolContext()
          const result = yield* Effect.flatMap(ToolRegistry, (registry) => registry.execute("leak", {})).pipe(provideToolContext(context))
          // `broken` failed to connect while the turn's tools were gathered: it is held back now.
          const connect = yield* Effect.result(Effect.flatMap(GuildMcpPool, (pool) => pool.session(registrations[1] ?? registrations[0]!)))
          const listed = yield* Effect.flatMap(GuildMcpAdmin, (admin) => admin.list("guild-1"))
          return { connect, listed, result }
        }).pipe(Effect.provide(registryWithGuildMcp({ registrations }).layer))
      )
      assert.isFalse(result.success)
      // The model reads the kind of failure; the server's words and its host are for operators.
      assert.strictEqual(result.error, "MCP tool 'leak' on 'leaky' failed: the connection to the server was lost (unreachable)")
      assert.include(result.detail ?? "", "Error POSTing to endpoint: internal error while serving … (host 127.0.0.1:", "the failure itself is kept for operators")
      assertNoSecret("the tool result", result.error ?? "")
      assertNoSecret("the tool result's detail", result.detail ?? "")
      assert.isTrue(Result.isFailure(connect) && connect.failure._tag === "McpQuarantinedError")
      assertNoSecret("the connect error", Result.isFailure(connect) ? connect.failure.message : "")
      assert.deepStrictEqual(listed.map((view) => view.url), [`http://127.0.0.1:${onCall.port}`, `http://127.0.0.1:${always.port}`])
      const lines = yield* logs.logs
      const failed = lines.find((line) => line.message.includes(`'broken' (http://127.0.0.1:${always.port}) failed to connect`))
      assert.include(failed?.cause ?? "", "internal error while serving …", "the operator still reads the server's answer")
      assertNoSecret("the logs", lines.map((line) => `${line.message} ${line.cause} ${JSON.stringify(line.annotations)}`).join("\n"))
    })
  )

  it.effect("a global server's connect warnings and tool errors never show the path or query", () =>
    Effect.gen(function* () {
      const onCall = yield* serve(() => startHostileServer("echoPathOnCall"))
      const always = yield* serve(() => startHostileServer("echoPathAlways"))
      const logs = yield* makeLogCapture
      const result = yield* logs.capture(
        Effect.gen(function* () {
          yield* Layer.build(GlobalMcpServersLive.pipe(Layer.provide(McpConfig.make({
            globalServers: [
              { name: "leaky", url: secretUrl(onCall.port), transport: "streamable-http", args: [] },
              { name: "broken", url: secretUrl(always.port), transport: "sse", args: [] }
            ],
            startupWait: Duration.seconds(30)
          }))))
          const registry = yield* ToolRegistry
          yield* eventually(registry.all, (tools) => tools.some((tool) => tool.name === "leak"), "the leaky server's tool")
          const { context } = yield* makeToolContext()
          return yield* registry.execute("leak", {}).pipe(provideToolContext(context))
        }).pipe(Effect.provide(ToolRegistry.layer.pipe(Layer.provide(GuildToolSource.none))))
      )
      yield* TestClock.adjust(Duration.seconds(2))
      assert.isFalse(result.success)
      assert.notInclude(result.error ?? "", "internal error while serving")
      assert.include(result.detail ?? "", "internal error while serving …")
      assertNoSecret("the tool result", result.error ?? "")
      assertNoSecret("the tool result's detail", result.detail ?? "")
      const lines = yield* logs.logs
      assert.isTrue(lines.some((line) => line.message.includes("MCP server 'broken' is unreachable")))
      assert.isTrue(lines.some((line) => line.message.includes(`Global MCP server 'leaky' (http://127.0.0.1:${onCall.port}) connected`)))
      assertNoSecret("the logs", lines.map((line) => `${line.message} ${line.cause}`).join("\n"))
    })
  )
})
