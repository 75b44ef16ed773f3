import type { AutocompleteInteraction, ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import { GuildMcpRegistry } from "../../mcp/GuildMcpRegistry"
import { type ApprovalRule, ServerLimits, ServerSettingsStore } from "../../store/ServerSettingsStore"
import { ToolRegistry } from "../../tools/ToolRegistry"
import { TOOL_NAME_PATTERN } from "../../tools/toolValidation"
import { CommandError } from "./commandReply"
import { requireManageServer } from "./modelCommand"

/** An MCP server name as `/mcp add` accepts it. */
const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,32}$/

export const describeApprovals = (rules: ReadonlyArray<ApprovalRule>): string => {
  if (rules.length === 0) return "No tool waits for approval: every call runs at once."
  const tools = rules.filter((rule) => rule.kind === "tool").map((rule) => `\`${rule.name}\``)
  const servers = rules.filter((rule) => rule.kind === "mcp_server").map((rule) => `\`${rule.name}\``)
  return [
    ...(tools.length === 0 ? [] : [`Tools: ${tools.join(", ")}`]),
    ...(servers.length === 0 ? [] : [`Every tool of the MCP servers: ${servers.join(", ")}`])
  ].join("\n")
}

const ruleText = (rule: ApprovalRule) => (rule.kind === "tool" ? `the tool \`${rule.name}\`` : `every tool of the MCP server \`${rule.name}\``)

/** The rule the options name: exactly one of `tool` and `mcp_server`. */
const ruleOf = (interaction: ChatInputCommandInteraction): Effect.Effect<ApprovalRule, CommandError> => {
  const tool = interaction.options.getString("tool")?.trim() ?? ""
  const server = interaction.options.getString("mcp_server")?.trim() ?? ""
  if ((tool === "") === (server === "")) return Effect.fail(new CommandError({ detail: "Name either a tool or an MCP server (one of the two)." }))
  if (tool !== "") {
    return TOOL_NAME_PATTERN.test(tool)
      ? Effect.succeed({ kind: "tool", name: tool })
      : Effect.fail(new CommandError({ detail: "A tool name is 1-64 letters, digits, '_' or '-'." }))
  }
  return SERVER_NAME_PATTERN.test(server)
    ? Effect.succeed({ kind: "mcp_server", name: server })
    : Effect.fail(new CommandError({ detail: "An MCP server name is 1-32 letters, digits, '_' or '-'." }))
}

/**
 * `/approvals add|remove|list`: tools that wait for a human before they run. A call to one
 * posts Approve / Deny buttons that only the member who triggered the reply, or a Manage Server
 * member, can press; no answer in time is a denial.
 */
export const approvalsCommand = (interaction: ChatInputCommandInteraction) =>
  Effect.gen(function*() {
    const guildId = yield* requireManageServer(interaction)
    const store = yield* ServerSettingsStore
    const failed = (error: { readonly message: string }) => new CommandError({ detail: `Could not reach the settings: ${error.message}` })
    const subcommand = interaction.options.getSubcommand()
    if (subcommand === "add") {
      const rule = yield* ruleOf(interaction)
      const outcome = yield* store.addApprovalRule(guildId, rule, interaction.user.id).pipe(Effect.mapError(failed))
      if (outcome === "full") return yield* new CommandError({ detail: `This server has ${ServerLimits.approvalRules} approval rules already; remove some first.` })
      return outcome === "added"
        ? `✅ From now on ${ruleText(rule)} waits for Approve / Deny before it runs.`
        : `${ruleText(rule)} already waits for approval.`
    }
    if (subcommand === "remove") {
      const rule = yield* ruleOf(interaction)
      const removed = yield* store.removeApprovalRule(guildId, rule).pipe(Effect.mapError(failed))
      return removed ? `✅ ${ruleText(rule)} runs without approval again.` : `${ruleText(rule)} was not waiting for approval.`
    }
    return describeApprovals(yield* store.approvalRules(guildId).pipe(Effect.mapError(failed)))
  })

/** Suggestions for `tool:` (the bot's tools) and `mcp_server:` (this server's MCP servers). */
export const approvalsAutocomplete = (interaction: AutocompleteInteraction) =>
  Effect.gen(function*() {
    const focused = interaction.options.getFocused(true)
    const typed = String(focused.value).trim().toLowerCase()
    const names = focused.name === "tool"
      ? (yield* (yield* ToolRegistry).all).map((tool) => tool.name)
      : focused.name === "mcp_server" && interaction.guildId !== null
      ? (yield* (yield* GuildMcpRegistry).list(interaction.guildId).pipe(Effect.orElseSucceed(() => []))).map((server) => server.name)
      : []
    const matching = names.filter((name) => name.toLowerCase().includes(typed)).slice(0, 25)
    yield* Effect.tryPromise(() => interaction.respond(matching.map((name) => ({ name, value: name }))))
  })
