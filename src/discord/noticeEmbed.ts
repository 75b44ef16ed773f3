import type { APIEmbed } from "discord.js"
import { failureClassText } from "../loop/FailureClass"
import { UserNotice } from "../loop/UserNotice"
import { clip, DiscordLimit } from "./discordLimits"

const Color = { info: 0x5865f2, warn: 0xf1c40f, error: 0xe74c3c } as const


const embed = (color: number, title: string, description: string): APIEmbed => ({
  color,
  title: clip(title, DiscordLimit.embedTitle),
  description: clip(description, DiscordLimit.embedDescription)
})

/** How a notice beside the reply looks on Discord (pure). */
export const noticeEmbed: (notice: UserNotice) => APIEmbed = UserNotice.$match({
  StillWorking: ({ iteration }) =>
    embed(Color.warn, "Still working…", `This is taking a while (${iteration} steps so far). Use /kill to stop it.`),
  MaxIterations: ({ iterations }) =>
    embed(Color.warn, `Stopped after ${iterations} steps`, "The reply reached the step limit before finishing. Ask again, perhaps more narrowly."),
  ToolErrorLoop: ({ failures, lastTool }) =>
    embed(Color.error, "Tools keep failing", `${failures} tool calls failed in a row (last: \`${lastTool}\`), so I stopped.`),
  StreamTimeout: ({ phase, provider }) =>
    embed(
      Color.warn,
      "The model stopped responding",
      phase === "first_token"
        ? `${provider} sent nothing before the first-token deadline. The service may be overloaded; try again.`
        : `${provider} went quiet in the middle of the reply. Try again.`
    ),
  FallbackUsed: ({ failures, model }) =>
    embed(
      Color.info,
      `Answered by fallback model ${model}`,
      failures.map((failure) => `• ${failure.model}: ${failureClassText[failure.reason]}`).join("\n") || "Earlier models failed."
    ),
  ProviderFailed: ({ model, reason }) => embed(Color.error, "The model could not answer", `${model}: ${failureClassText[reason]}.`),
  Stopped: () => embed(Color.info, "Stopped", "The reply was stopped with /kill."),
  ToolProgress: ({ text, tool }) => ({ color: Color.info, description: clip(text.length > 0 ? text : tool, DiscordLimit.embedDescription) })
})
