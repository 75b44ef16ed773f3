import { assert, describe, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import { UserNotice } from "../../src/loop/UserNotice"
import { killSummary } from "../../src/discord/commands/killCommand"
import { formatServerList, parseHeader } from "../../src/discord/commands/mcpCommand"
import { formatToolList } from "../../src/discord/commands/toolsCommand"
import { commandDefinitions } from "../../src/discord/commands/definitions"
import { noticeEmbed } from "../../src/discord/noticeEmbed"
import { webhookUsername } from "../../src/discord/PersonaWebhooks"
import { majorParameter } from "../../src/discord/RateLimitGauge"
import { toolSuccess } from "../../src/domain/ToolResult"
import { ConnectionStatus } from "../../src/mcp/GuildMcpPool"
import { makeTool } from "../../src/tools/Tool"

describe("what the Discord front writes", () => {
  it("/kill summaries", () => {
    assert.strictEqual(killSummary({ killed: false, cancelled: 0 }), "Nothing is running in this channel.")
    assert.strictEqual(killSummary({ killed: true, cancelled: 0 }), "⏹ Stopped the reply.")
    assert.strictEqual(killSummary({ killed: true, cancelled: 2 }), "⏹ Stopped the reply and cancelled 2 queued replies.")
    assert.strictEqual(killSummary({ killed: false, cancelled: 1 }), "⏹ Cancelled 1 queued reply.")
  })

  it.effect("/mcp add header parsing keeps the value secret and refuses malformed headers", () =>
    Effect.gen(function*() {
      assert.deepStrictEqual(yield* parseHeader("Authorization: Bearer abc"), { Authorization: "Bearer abc" })
      assert.deepStrictEqual(yield* parseHeader(null), {})
      const bad = yield* Effect.result(parseHeader("no colon here"))
      assert.isTrue(Result.isFailure(bad) && bad.failure.message.includes("Name: value"))
    }))

  it("/mcp list shows state and header names, never header values", () => {
    const text = formatServerList([
      { name: "search", url: "https://mcp.example/mcp?…", type: "web_search", enabled: true, headerNames: ["x-api-key"], addedBy: "1", addedAt: 0, connection: ConnectionStatus.Connected({ transport: "streamable-http", toolNames: ["a", "b"], lastUsedAt: 0 }) },
      { name: "off", url: "https://off.example/mcp", type: "generic", enabled: false, headerNames: [], addedBy: "1", addedAt: 0, connection: ConnectionStatus.Idle() }
    ])
    assert.include(text, "**search** (web_search) https://mcp.example/mcp?…: connected (streamable-http, 2 tools) · headers: x-api-key")
    assert.include(text, "**off** (generic) https://off.example/mcp: disabled")
    assert.include(formatServerList([]), "/mcp add")
  })

  it("/tools groups tools by source with their first sentence", () => {
    const tool = makeTool({ name: "web_search", description: "Searches the web. Returns links.", category: "search", parameters: Schema.Struct({}), execute: () => Effect.succeed(toolSuccess()) })
    const text = formatToolList([tool], { provider: "openai-compatible", model: "gpt-x" }, false)
    assert.strictEqual(text, "Tools **gpt-x** (openai-compatible) can use here:\n**Built-in**\n• `web_search`: Searches the web.")
    assert.include(formatToolList([], { provider: "p", model: "m" }, true), "none.")
  })

  it("notices render as embeds within Discord's limits", () => {
    const long = noticeEmbed(UserNotice.ProviderFailed({ model: "m".repeat(10_000), reason: "rate_limited" }))
    assert.strictEqual(long.description?.length, 4096)
    assert.include(noticeEmbed(UserNotice.StillWorking({ iteration: 20 })).description ?? "", "/kill")
    assert.strictEqual(noticeEmbed(UserNotice.FallbackUsed({ model: "b", failures: [{ model: "a", reason: "rate_limited" }] })).description, "• a: rate limited")
  })

  it("webhook usernames Discord accepts; rate-limit keys from request paths", () => {
    assert.strictEqual(webhookUsername("Discord Helper"), "d*scord Helper")
    assert.strictEqual(webhookUsername("   "), "loopcord")
    assert.strictEqual(webhookUsername("n".repeat(100)).length, 80)
    assert.strictEqual(majorParameter("/channels/123456/messages/789"), "123456")
    assert.strictEqual(majorParameter("/webhooks/555555/token/messages/1"), "555555")
    assert.strictEqual(majorParameter("/gateway/bot"), undefined)
  })

  it("slash commands: valid names and sizes for registration", () => {
    const names = commandDefinitions.map((command) => command.name)
    assert.deepStrictEqual(names, [
      "kill", "channel", "mcp", "tools", "capabilities", "key", "usage", "image-tags",
      "model", "persona", "triggers", "access", "approvals", "settings"
    ])
    // Discord refuses the whole bulk registration for one bad option: every level is checked.
    interface OptionJson { readonly name: string; readonly description: string; readonly choices?: ReadonlyArray<{ readonly name: string }>; readonly options?: ReadonlyArray<OptionJson> }
    const check = (item: OptionJson, path: string) => {
      assert.match(item.name, /^[-_a-z0-9]{1,32}$/, path)
      assert.isAtMost(item.description.length, 100, path)
      assert.isAtMost(item.choices?.length ?? 0, 25, path)
      for (const choice of item.choices ?? []) assert.isAtMost(choice.name.length, 100, `${path} choice ${choice.name}`)
      assert.isAtMost(item.options?.length ?? 0, 25, path)
      for (const option of item.options ?? []) check(option, `${path} ${option.name}`)
    }
    for (const command of commandDefinitions) check(command as OptionJson, command.name)
  })
})
