import type { ChatInputCommandInteraction } from "discord.js"
import { Effect } from "effect"
import { GuildSettingsStore } from "../../store/GuildSettingsStore"
import type { Tool } from "../../tools/Tool"
import { ToolRegistry } from "../../tools/ToolRegistry"
import { initialTurnFlags } from "../../tools/TurnState"
import { clip } from "../discordLimits"

/** The provider and primary model a turn in this channel would use. */
interface ModelRoute {
  readonly provider: string
  readonly model: string
}

const firstSentence = (text: string) => {
  const line = text.split("\n")[0]?.trim() ?? ""
  const sentence = /^(.{1,140}?[.!?])(\s|$)/.exec(line)?.[1] ?? line
  return clip(sentence, 140)
}

const sourceLabel = (tool: Tool) =>
  tool.source.kind === "builtin" ? "Built-in" : tool.source.scope === "global" ? `MCP · ${tool.source.server}` : `This server's MCP · ${tool.source.server}`

/** The tool list as `/tools` shows it, grouped by where each tool comes from (pure). */
export const formatToolList = (tools: ReadonlyArray<Tool>, route: ModelRoute, deliberate: boolean): string => {
  const header = `Tools **${route.model}** (${route.provider}) can use here:`
  if (tools.length === 0) return `${header}\nnone.`
  const groups = new Map<string, Array<Tool>>()
  for (const tool of tools) groups.set(sourceLabel(tool), [...(groups.get(sourceLabel(tool)) ?? []), tool])
  const body = [...groups.entries()]
    .map(([label, members]) => `**${label}**\n${members.map((tool) => `• \`${tool.name}\`: ${firstSentence(tool.description)}`).join("\n")}`)
    .join("\n")
  const note = deliberate ? "\n-# Deliberate tool mode is on: a tool is offered only when a message asks for it." : ""
  return `${header}\n${body}${note}`
}

/** `/tools`: what the model may call in this channel right now (ToolRegistry.toolsForTurn). */
export const toolsCommand = (interaction: ChatInputCommandInteraction, route: ModelRoute) =>
  Effect.gen(function*() {
    const registry = yield* ToolRegistry
    const guildId = interaction.guildId ?? undefined
    const tools = yield* registry.toolsForTurn({
      provider: route.provider,
      model: route.model,
      guildId,
      channelId: interaction.channelId,
      flags: initialTurnFlags
    })
    const deliberate = guildId === undefined
      ? false
      : yield* GuildSettingsStore.pipe(
        Effect.flatMap((store) => store.isEnabled(guildId, "deliberate_tool_mode")),
        Effect.orElseSucceed(() => false)
      )
    return formatToolList(tools, route, deliberate)
  })
