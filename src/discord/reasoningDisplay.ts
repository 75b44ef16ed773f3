import type { SendableChannels } from "discord.js"
import { Effect } from "effect"
import type { TurnResult } from "../domain/TurnResult"
import type { ThoughtLog } from "../loop/ThoughtLog"
import type { GuildSettingsStore } from "../store/GuildSettingsStore"
import { NO_MENTIONS } from "./DiscordClient"
import { clip, DiscordLimit } from "./discordLimits"

/** How a server shows a reply's reasoning: not at all (the default), behind a spoiler, or as a file. */
type ReasoningDisplay = "hidden" | "spoiler" | "file"

/** The file is cut beyond this (reasoning is bounded by the stream's own caps already). */
const REASONING_FILE_MAX_CHARS = 256 * 1024
/** Characters of reasoning a thought-log notice carries. */
const THOUGHT_LOG_EXCERPT = 1000

const SPOILER_HEADER = "🧠 Reasoning:\n"

/** The reasoning as one spoiler message (pure): `||` inside cannot end the spoiler early; cut to fit. */
const reasoningSpoiler = (reasoning: string): string => {
  const room = DiscordLimit.content - SPOILER_HEADER.length - 4
  const body = clip(reasoning.trim().replaceAll("||", "|\u200b|"), room)
  return `${SPOILER_HEADER}||${body}||`
}

const displayOf = (capabilities: { readonly reasoning_as_spoiler: boolean; readonly reasoning_as_file: boolean }): ReasoningDisplay =>
  capabilities.reasoning_as_file ? "file" : capabilities.reasoning_as_spoiler ? "spoiler" : "hidden"

/**
 * After a reply: its reasoning goes to the thought log (an excerpt, for operators), and, when the
 * server asks for it (`reasoning_as_spoiler` / `reasoning_as_file`), below the reply. Only a reply
 * that completed shows it; nothing here fails the turn.
 */
const showReasoning = (
  deps: { readonly capabilities: Effect.Effect<ReasoningDisplay>; readonly thoughtLog: ThoughtLog["Service"] },
  where: { readonly channel: SendableChannels; readonly guildId: string | undefined },
  result: TurnResult
): Effect.Effect<void> =>
  Effect.gen(function*() {
    const reasoning = result.thoughtLog?.raw?.trim() ?? ""
    if (reasoning.length === 0) return
    yield* deps.thoughtLog.post({
      kind: "reasoning",
      severity: "info",
      title: "Reasoning of a reply",
      description: clip(reasoning, THOUGHT_LOG_EXCERPT),
      channelId: where.channel.id,
      guildId: where.guildId
    })
    if (result.status !== "completed" || where.guildId === undefined) return
    const display = yield* deps.capabilities
    if (display === "hidden") return
    const channel = where.channel
    yield* Effect.tryPromise((): Promise<unknown> =>
      display === "spoiler"
        ? channel.send({ content: reasoningSpoiler(reasoning), allowedMentions: NO_MENTIONS })
        : channel.send({
          content: "🧠 Reasoning of the reply above",
          files: [{ attachment: Buffer.from(reasoning.slice(0, REASONING_FILE_MAX_CHARS), "utf8"), name: "reasoning.txt" }],
          allowedMentions: NO_MENTIONS
        })
    )
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("showing the reasoning failed", cause)))

/** The display a server's capabilities choose; unreadable settings show nothing. */
const serverDisplay = (store: GuildSettingsStore["Service"], guildId: string): Effect.Effect<ReasoningDisplay> =>
  store.get(guildId).pipe(Effect.map(displayOf), Effect.orElseSucceed((): ReasoningDisplay => "hidden"))

/** `DiscordTurnDeps.afterReply`: the reasoning of each reply, shown as its server asks (DMs: thought log only). */
export const reasoningAfterReply = (store: GuildSettingsStore["Service"], thoughtLog: ThoughtLog["Service"]) =>
  (channel: SendableChannels, result: TurnResult): Effect.Effect<void> => {
    const guildId = channel.isDMBased() ? undefined : channel.guildId
    const capabilities = guildId === undefined ? Effect.succeed<ReasoningDisplay>("hidden") : serverDisplay(store, guildId)
    return showReasoning({ capabilities, thoughtLog }, { channel, guildId }, result)
  }
