import { assert, describe, it } from "@effect/vitest"
import { formatServerList } from "../../src/discord/commands/mcpCommand"
import { formatUsage } from "../../src/discord/commands/usageCommand"
import { commandDefinitions } from "../../src/discord/commands/definitions"
import { credentialProblemText } from "../../src/discord/DiscordCredentials"
import { noticeEmbed, serverRouteRefusal } from "../../src/discord/noticeEmbed"
import { UserNotice } from "../../src/loop/UserNotice"
import { ConnectionStatus } from "../../src/mcp/GuildMcpPool"
import { DAY_MS } from "../../src/store/ServerTurnAdmissionStore"
import { CredentialProblem } from "../../src/store/StoreCredentialRoutes"
import { renderNotice } from "../../src/terminal/render"

describe("what the Discord front says about keys, quotas and usage (pure)", () => {
  it("/usage: one line per day, newest first, by credential source; the total; today's quota", () => {
    const text = formatUsage("Your usage", [
      { day: 20_000, source: "personal", turns: 2, inputTokens: 100, outputTokens: 50, totalTokens: 150 },
      { day: 20_000, source: "server", turns: 1, inputTokens: 900, outputTokens: 100, totalTokens: 1000 },
      { day: 19_998, source: "operator", turns: 1, inputTokens: 5, outputTokens: 5, totalTokens: 10 }
    ], ["Today on this server's budget: 1 of your 20 turns."])
    assert.strictEqual(text, [
      "**Your usage** (UTC days; turns / tokens)",
      `${new Date(20_000 * DAY_MS).toISOString().slice(0, 10)}: 3 turns, 1,150 tokens (own key 2 / 150 · server key 1 / 1,000)`,
      `${new Date(19_998 * DAY_MS).toISOString().slice(0, 10)}: 1 turn, 10 tokens (bot's keys 1 / 10)`,
      "Last 7 days: 4 turns, 1,160 tokens (own key 2 / 150 · server key 1 / 1,000 · bot's keys 1 / 10)",
      "Today on this server's budget: 1 of your 20 turns."
    ].join("\n"))
    assert.include(formatUsage("This server's usage", []), "No turns in the last 7 days.")
  })

  it("a key owner's DM says what to do and never carries a key", () => {
    assert.include(credentialProblemText(CredentialProblem.PersonalKeyRefused({ status: 403 })), "refused your personal API key (HTTP 403)")
    assert.include(credentialProblemText(CredentialProblem.PersonalKeyRefused({ status: undefined })), "/key personal")
    assert.include(credentialProblemText(CredentialProblem.PersonalKeyUnusable()), "can no longer read the personal API key")
    assert.include(credentialProblemText(CredentialProblem.ServerKeyUnusable({ guildId: "123" })), "/key server")
  })

  it("a refused server route says why and when; the personal timeout variant points at the user's provider account", () => {
    assert.include(serverRouteRefusal("cooldown", 2_500), "Try again in 3 s")
    assert.include(serverRouteRefusal("server_quota", undefined), "This server has used all its turns")
    assert.include(serverRouteRefusal("user_quota", undefined), "You have used all your turns")
    assert.include(serverRouteRefusal("user_byok_mode", undefined), "/key personal")
    assert.strictEqual(noticeEmbed(UserNotice.ServerRouteRefused({ reason: "cooldown", retryAfterMs: 1000 })).title, "The server's key was not used")
    const personal = noticeEmbed(UserNotice.StreamTimeout({ provider: "openai-compatible", phase: "idle", personalKey: true })).description ?? ""
    const plain = noticeEmbed(UserNotice.StreamTimeout({ provider: "openai-compatible", phase: "idle" })).description ?? ""
    assert.include(personal, "your own API key")
    assert.notInclude(plain, "your own API key")
    assert.include(renderNotice(UserNotice.StreamTimeout({ provider: "p", phase: "first_token", personalKey: true })), "your own API key")
    assert.include(renderNotice(UserNotice.ServerRouteRefused({ reason: "server_quota", retryAfterMs: undefined })), "server quota")
  })

  it("/mcp list says when a server's stored headers can no longer be read", () => {
    const text = formatServerList([
      { name: "lost", url: "https://mcp.example/mcp", type: "generic", enabled: false, headerNames: [], headersUnusable: true, addedBy: "1", addedAt: 0, connection: ConnectionStatus.Idle() }
    ])
    assert.include(text, "**lost** (generic) https://mcp.example/mcp: disabled · its stored secrets (headers or URL) can no longer be read")
  })

  it("/key and /usage register with Discord's limits (every description ≤ 100 characters, the key option bounded)", () => {
    const descriptions = (node: unknown): ReadonlyArray<string> =>
      typeof node !== "object" || node === null
        ? []
        : [
          ...("description" in node && typeof node.description === "string" ? [node.description] : []),
          ...("options" in node && Array.isArray(node.options) ? node.options.flatMap(descriptions) : [])
        ]
    for (const name of ["key", "usage"]) {
      const command = commandDefinitions.find((definition) => definition.name === name)
      assert.isDefined(command)
      for (const description of descriptions(command)) assert.isAtMost(description.length, 100, description)
    }
    const key = JSON.stringify(commandDefinitions.find((definition) => definition.name === "key"))
    assert.include(key, "\"max_length\":512")
  })
})
