import { Effect } from "effect"
import { toolFailure, type ToolResult } from "../../../domain/ToolResult"
import type { GuildSettingsStore } from "../../../store/GuildSettingsStore"
import type { AssemblyContext, Tool } from "../../Tool"
import type { ToolContextShape } from "../../ToolContext"
import { ToolError } from "../../ToolError"
import type { GuildMember } from "./BlockTargetResolver"

/**
 * Rules shared by `block_user` and `unblock_user`:
 * - guilds only, and only when an admin turned on `user_blocking_enabled` (the tools are hidden
 *   otherwise, and a call that slips through is refused);
 * - not while a user speaks through the persona (impersonation): a block is the persona's choice;
 * - never a bot (the bot itself included) and never a server administrator (Administrator or
 *   Manage Server): they manage the persona, so the persona cannot shut them out. Anyone else,
 *   including the user who triggered the turn, may be blocked.
 */
const BLOCKING_CAPABILITY = "user_blocking_enabled"

type Settings = GuildSettingsStore["Service"]

/** Assembly hook: the tool only in guilds that enabled the capability. */
export const assembleWhenEnabled =
  (settings: Settings) =>
  (tool: Tool) =>
  (context: AssemblyContext): Effect.Effect<Tool | null, unknown> =>
    context.guildId === undefined
      ? Effect.succeed(null)
      : Effect.map(settings.isEnabled(context.guildId, BLOCKING_CAPABILITY), (enabled) => (enabled ? tool : null))

/** Why this call may not block or unblock anyone, if it may not. */
export const refusal = (
  settings: Settings,
  toolName: string,
  context: ToolContextShape
): Effect.Effect<ToolResult | undefined, ToolError> =>
  Effect.gen(function* () {
    if (context.guildId === undefined) return toolFailure("Blocking users is only available in servers, not in direct messages.")
    if (context.isUserImpersonation) {
      return toolFailure("Blocking is the persona's own decision and is not available while a user speaks through the persona.")
    }
    const enabled = yield* settings.isEnabled(context.guildId, BLOCKING_CAPABILITY).pipe(
      Effect.mapError((error) => new ToolError({ tool: toolName, error: "the server's settings could not be read (a storage error)", detail: error.message, cause: error }))
    )
    return enabled
      ? undefined
      : toolFailure("User blocking is turned off in this server. A server admin can enable it with /capabilities.")
  })

/** Why this member can never be blocked, if they cannot. */
export const protectedMember = (member: GuildMember): string | undefined =>
  member.isBot
    ? "Bots cannot be blocked or muted."
    : member.isAdministrator
      ? `${member.displayName} is a server administrator and cannot be blocked or muted.`
      : undefined

export const describeCandidates = (candidates: ReadonlyArray<GuildMember>): string =>
  candidates.slice(0, 5).map((member) => `${member.displayName} (@${member.username}, <@${member.userId}>)`).join(", ")
