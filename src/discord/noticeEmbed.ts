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

/** Why the server's key did not answer, for the user (no counts or ids of anyone else). */
export const serverRouteRefusal = (
  reason: "cooldown" | "server_quota" | "user_quota" | "user_byok_mode",
  retryAfterMs: number | undefined
): string => {
  switch (reason) {
    case "cooldown":
      return `You are sending messages faster than this server allows on its key. Try again in ${Math.max(1, Math.ceil((retryAfterMs ?? 1000) / 1000))} s, or set your own key with /key personal.`
    case "server_quota":
      return "This server has used all its turns on its key for today (resets at 00:00 UTC). You can still use your own key: /key personal."
    case "user_quota":
      return "You have used all your turns on this server's key for today (resets at 00:00 UTC). You can still use your own key: /key personal."
    case "user_byok_mode":
      return "This server asks everyone to bring their own API key. Set yours with /key personal (only you see it)."
  }
}

/** How a notice beside the reply looks on Discord (pure). */
export const noticeEmbed: (notice: UserNotice) => APIEmbed = UserNotice.$match({
  StillWorking: ({ iteration }) =>
    embed(Color.warn, "Still working…", `This is taking a while (${iteration} steps so far). Use /kill to stop it.`),
  MaxIterations: ({ iterations }) =>
    embed(Color.warn, `Stopped after ${iterations} steps`, "The reply reached the step limit before finishing. Ask again, perhaps more narrowly."),
  ToolErrorLoop: ({ failures, lastTool }) =>
    embed(Color.error, "Tools keep failing", `${failures} tool calls failed in a row (last: \`${lastTool}\`), so I stopped.`),
  NovelAiToolRetryExhausted: ({ failures, lastTool }) =>
    embed(Color.error, "The tool could not be used", `\`${lastTool}\` failed ${failures} times after I started answering, so I left the reply as it is.`),
  StreamTimeout: ({ personalKey, phase, provider }) =>
    embed(
      Color.warn,
      "The model stopped responding",
      (phase === "first_token"
        ? `${provider} sent nothing before the first-token deadline. The service may be overloaded; try again.`
        : `${provider} went quiet in the middle of the reply. Try again.`) +
        (personalKey === true ? " This reply ran on your own API key: check your provider account's status and limits." : "")
    ),
  FallbackUsed: ({ failures, model }) =>
    embed(
      Color.info,
      `Answered by fallback model ${model}`,
      failures.map((failure) => `• ${failure.model}: ${failureClassText[failure.reason]}`).join("\n") || "Earlier models failed."
    ),
  ProviderFailed: ({ model, reason }) => embed(Color.error, "The model could not answer", `${model}: ${failureClassText[reason]}.`),
  ServerRouteRefused: ({ reason, retryAfterMs }) => embed(Color.warn, "The server's key was not used", serverRouteRefusal(reason, retryAfterMs)),
  MessageShortened: ({ keptChars, totalChars }) =>
    embed(
      Color.warn,
      "Your message was shortened",
      `It is longer than the model can read at once: it saw the start and the end (${keptChars.toLocaleString("en-US")} of ${totalChars.toLocaleString("en-US")} characters).`
    ),
  Stopped: () => embed(Color.info, "Stopped", "The reply was stopped with /kill."),
  ToolProgress: ({ text, tool }) => ({ color: Color.info, description: clip(text.length > 0 ? text : tool, DiscordLimit.embedDescription) })
})
