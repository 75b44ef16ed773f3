import { Effect, Schema } from "effect"
import { toolFailure, toolSuccess } from "../../../domain/ToolResult"
import { GuildSettingsStore } from "../../../store/GuildSettingsStore"
import { MAX_BLOCK_HOURS, MIN_BLOCK_HOURS, PersonaBlockStore } from "../../../store/PersonaBlockStore"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { ToolError } from "../../ToolError"
import { assembleWhenEnabled, describeCandidates, protectedMember, refusal } from "./blockingAccess"
import { BlockTargetResolver } from "./BlockTargetResolver"

export const BLOCK_USER = "block_user"

const Parameters = Schema.Struct({
  user: Schema.String.annotate({ description: "Who to block: their name, an @mention or their user id." }),
  block_type: Schema.Literals(["mute", "block"]).annotate({
    description:
      "'mute': ignore their messages (they no longer get replies from you) but keep them in context. " +
      "'block': also hide their messages from your context."
  }),
  duration_hours: Schema.Number.annotate({
    description: `How long, in whole hours (${MIN_BLOCK_HOURS} to ${MAX_BLOCK_HOURS}).`
  }),
  reason: Schema.String.annotate({ description: "Why, in a short sentence (kept for the server's admins)." })
})

/**
 * `block_user` (docs/architecture.md, Persona blocks): a persona-scoped, time-limited mute or block
 * of a guild member, behind the guild capability `user_blocking_enabled` (see blockingAccess).
 */
export const makeBlockUserTool: Effect.Effect<Tool, never, PersonaBlockStore | GuildSettingsStore | BlockTargetResolver> =
  Effect.gen(function* () {
    const blocks = yield* PersonaBlockStore
    const settings = yield* GuildSettingsStore
    const resolver = yield* BlockTargetResolver

    const tool: Tool = makeTool({
      name: BLOCK_USER,
      description:
        "Mute or block a server member for a while, for yourself (this persona) only: use it when someone keeps " +
        "harassing you, spamming or trying to make you break your rules. Muted users cannot get replies from you; " +
        "blocked users are also hidden from your context. Tell the user briefly what you did.",
      category: "discord",
      parameters: Parameters,
      requiresFollowUp: false,
      // Blocking and unblocking the same user in one pass must land in the order the model gave.
      sequential: true,
      isAvailableForContext: (context) => context.guildId !== undefined,
      assembleForContext: (context) => assembleWhenEnabled(settings)(tool)(context),
      triggerPatterns: [/\b(?:block|mute|ignore|silence)\b/i],
      execute: (args) =>
        Effect.gen(function* () {
          const context = yield* ToolContext
          const refused = yield* refusal(settings, BLOCK_USER, context)
          if (refused !== undefined || context.guildId === undefined) return refused ?? toolFailure("Not in a server.")
          const hours = args.duration_hours
          if (!Number.isInteger(hours) || hours < MIN_BLOCK_HOURS || hours > MAX_BLOCK_HOURS) {
            return toolFailure(`duration_hours must be a whole number of hours from ${MIN_BLOCK_HOURS} to ${MAX_BLOCK_HOURS}.`)
          }
          const reason = args.reason.trim()
          if (reason.length === 0) return toolFailure("Give a short reason for the block.")
          const lookup = yield* resolver.resolve(context.guildId, args.user)
          if (lookup._tag === "NotFound") return toolFailure(`No member of this server matches "${args.user.trim()}".`)
          if (lookup._tag === "Ambiguous") {
            return toolFailure(`Several members match "${args.user.trim()}": ${describeCandidates(lookup.candidates)}. Use their mention or id.`)
          }
          const target = lookup.member
          const forbidden = protectedMember(target)
          if (forbidden !== undefined) return toolFailure(forbidden)
          const stored = yield* blocks
            .block({
              guildId: context.guildId,
              personaId: context.persona.id,
              userId: target.userId,
              userName: target.displayName,
              mode: args.block_type,
              hours,
              reason,
              blockedBy: context.userId
            })
            .pipe(Effect.mapError((error) => new ToolError({ tool: BLOCK_USER, error: "the block list could not be read or changed (a storage error)", detail: error.message, cause: error })))
          yield* Effect.logInfo(`Persona ${args.block_type}d user ${target.userId} in guild ${context.guildId} for ${hours}h`)
          const effect =
            args.block_type === "mute"
              ? "Their messages no longer trigger you; they stay visible in your context."
              : "Their messages no longer trigger you and are hidden from your context."
          return toolSuccess(
            {
              status: args.block_type === "mute" ? "user_muted" : "user_blocked",
              user: target.displayName,
              block_type: args.block_type,
              duration_hours: hours,
              expires_at: new Date(stored.expiresAt).toISOString()
            },
            { message: `${target.displayName} is ${args.block_type === "mute" ? "muted" : "blocked"} for ${hours} hour(s). ${effect}` }
          )
        })
    })
    return tool
  })
