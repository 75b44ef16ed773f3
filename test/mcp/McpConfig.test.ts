import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Result, Layer, Option, Redacted } from "effect"
import { settingsProvider } from "../../src/config/dotenv"
import { McpConfig } from "../../src/config/McpConfig"

const load = (env: Record<string, string>) =>
  Effect.result(
    McpConfig.pipe(
      Effect.provide(McpConfig.layer.pipe(Layer.provide(ConfigProvider.layer(settingsProvider(env)))))
    )
  )

describe("McpConfig (design §5.2, spec §10)", () => {
  it.effect("defaults: no global servers, 15 s / 30 s / 5 min / 10 min, no Smithery", () =>
    Effect.gen(function* () {
      const settings = yield* Effect.flatMap(load({}), Result.match({ onFailure: Effect.die, onSuccess: Effect.succeed }))
      assert.deepStrictEqual(settings.globalServers, [])
      assert.strictEqual(Duration.toMillis(settings.guildConnectTimeout), 15_000)
      assert.strictEqual(Duration.toMillis(settings.guildExecutionTimeout), 30_000)
      assert.strictEqual(Duration.toMillis(settings.guildFailureCooldown), 300_000)
      assert.strictEqual(Duration.toMillis(settings.guildConnectionTtl), 600_000)
      assert.strictEqual(settings.maxGuildServers, 10)
      assert.strictEqual(settings.guildResponseCapBytes, 8 * 1024 * 1024)
      assert.isTrue(Option.isNone(settings.smithery))
    })
  )

  it.effect("MCP_SERVERS: entries decoded, transport defaults to streamable-http", () =>
    Effect.gen(function* () {
      const result = yield* load({
        MCP_SERVERS: JSON.stringify([
          { name: "search", url: "https://mcp.example/mcp" },
          { name: "legacy", url: "http://10.0.0.5:3000/sse", transport: "sse" },
          { name: "files", transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }
        ])
      })
      assert.isTrue(Result.isSuccess(result))
      if (Result.isSuccess(result)) {
        assert.deepStrictEqual(result.success.globalServers, [
          { name: "search", url: "https://mcp.example/mcp", transport: "streamable-http", args: [] },
          { name: "legacy", url: "http://10.0.0.5:3000/sse", transport: "sse", args: [] },
          { name: "files", transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }
        ])
      }
    })
  )

  it.effect("bad MCP_SERVERS values fail at start-up with an error naming the variable", () =>
    Effect.gen(function* () {
      const cases = [
        "[{name: 'x'}",
        JSON.stringify({ name: "not-an-array", url: "http://a/" }),
        JSON.stringify([{ name: "nourl" }]),
        JSON.stringify([{ name: "cmdless", transport: "stdio" }]),
        JSON.stringify([{ name: "ftp", url: "ftp://a/" }]),
        JSON.stringify([{ name: "bad name!", url: "http://a/" }]),
        JSON.stringify([{ name: "twice", url: "http://a/" }, { name: "twice", url: "http://b/" }]),
        JSON.stringify([{ name: "t", url: "http://a/", transport: "websocket" }])
      ]
      const messages: Array<string> = []
      for (const raw of cases) {
        const result = yield* load({ MCP_SERVERS: raw })
        assert.isTrue(Result.isFailure(result), raw)
        if (Result.isFailure(result)) {
          assert.include(String(result.failure), "MCP_SERVERS is not a valid JSON array of servers", raw)
          messages.push(String(result.failure))
        }
      }
      // The reason is short and points at the offending entry.
      assert.include(messages[2] ?? "", "needs a url")
      assert.include(messages[6] ?? "", "duplicate server name 'twice'")
    })
  )

  it.effect("guild knobs follow `Number(env) || default`", () =>
    Effect.gen(function* () {
      const result = yield* load({
        GUILD_MCP_CONNECT_TIMEOUT_MS: "2500",
        GUILD_MCP_EXECUTION_TIMEOUT_MS: "0",
        GUILD_MCP_FAILURE_COOLDOWN_MS: "soon",
        GUILD_MCP_CONNECTION_TTL_MINUTES: "1.5"
      })
      if (Result.isFailure(result)) return assert.fail(String(result.failure))
      assert.strictEqual(Duration.toMillis(result.success.guildConnectTimeout), 2_500)
      assert.strictEqual(Duration.toMillis(result.success.guildExecutionTimeout), 30_000)
      assert.strictEqual(Duration.toMillis(result.success.guildFailureCooldown), 300_000)
      assert.strictEqual(Duration.toMillis(result.success.guildConnectionTtl), 90_000)
    })
  )

  it.effect("SMITHERY_API_KEY enables Smithery Connect; the base URL and namespace can be overridden", () =>
    Effect.gen(function* () {
      const defaults = yield* load({ SMITHERY_API_KEY: "sk-1" })
      if (Result.isFailure(defaults)) return assert.fail(String(defaults.failure))
      const smithery = Option.getOrThrow(defaults.success.smithery)
      assert.strictEqual(Redacted.value(smithery.apiKey), "sk-1")
      assert.strictEqual(smithery.baseUrl, "https://api.smithery.ai")
      assert.isTrue(Option.isNone(smithery.namespace))
      assert.notInclude(String(smithery.apiKey), "sk-1")

      const custom = yield* load({ SMITHERY_API_KEY: "sk-1", SMITHERY_API_BASE_URL: "http://127.0.0.1:4010/", SMITHERY_NAMESPACE: "team" })
      if (Result.isFailure(custom)) return assert.fail(String(custom.failure))
      const overridden = Option.getOrThrow(custom.success.smithery)
      assert.strictEqual(overridden.baseUrl, "http://127.0.0.1:4010")
      assert.deepStrictEqual(overridden.namespace, Option.some("team"))

      const bad = yield* load({ SMITHERY_API_KEY: "sk-1", SMITHERY_API_BASE_URL: "not a url" })
      assert.isTrue(Result.isFailure(bad) && String(bad.failure).includes("SMITHERY_API_BASE_URL"))
    })
  )

  it.effect("[decisions 13, 14, 19] MCP_STARTUP_WAIT_MS, GUILD_MCP_ALLOW_PRIVATE_NETWORK, GUILD_MCP_MAX_TOOLS, MCP_RESULT_MAX_CHARS", () =>
    Effect.gen(function* () {
      const defaults = yield* load({})
      if (Result.isFailure(defaults)) return assert.fail(String(defaults.failure))
      assert.strictEqual(Duration.toMillis(defaults.success.startupWait), 20_000)
      assert.isFalse(defaults.success.guildAllowPrivateNetwork)
      assert.strictEqual(defaults.success.guildMaxTools, 64)
      assert.strictEqual(defaults.success.resultMaxChars, 50_000)
      assert.strictEqual(defaults.success.guildMaxToolPages, 5)
      assert.strictEqual(defaults.success.guildDescriptionMaxChars, 1024)
      assert.strictEqual(defaults.success.guildSchemaMaxBytes, 16 * 1024)
      assert.strictEqual(defaults.success.guildDeclarationsMaxBytes, 128 * 1024)
      assert.strictEqual(defaults.success.guildControlResponseCapBytes, 2 * 1024 * 1024)

      // RUN_ENV and fetch_url's opt-in never open guild MCP.
      const fetchOnly = yield* load({ RUN_ENV: "development", FETCH_URL_ALLOW_PRIVATE_NETWORK: "true" })
      assert.isTrue(Result.isSuccess(fetchOnly) && !fetchOnly.success.guildAllowPrivateNetwork)

      const set = yield* load({ MCP_STARTUP_WAIT_MS: "0", GUILD_MCP_ALLOW_PRIVATE_NETWORK: "TRUE", GUILD_MCP_MAX_TOOLS: "8", MCP_RESULT_MAX_CHARS: "100" })
      if (Result.isFailure(set)) return assert.fail(String(set.failure))
      assert.strictEqual(Duration.toMillis(set.success.startupWait), 0)
      assert.isTrue(set.success.guildAllowPrivateNetwork)
      assert.strictEqual(set.success.guildMaxTools, 8)
      assert.strictEqual(set.success.resultMaxChars, 500, "floored at 500 so the cut marker always fits")

      for (const name of ["MCP_STARTUP_WAIT_MS", "GUILD_MCP_MAX_TOOLS", "MCP_RESULT_MAX_CHARS"]) {
        const bad = yield* load({ [name]: "lots" })
        assert.isTrue(Result.isFailure(bad) && String(bad.failure).includes(name), name)
      }
    })
  )
})
