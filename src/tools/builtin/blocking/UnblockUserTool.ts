import { Effect, Option, Schema } from "effect"
import { toolFailure, toolSuccess } from "../../../domain/ToolResult"
import { GuildSettingsStore } from "../../../store/GuildSettingsStore"
import { PersonaBlockStore } from "../../../store/PersonaBlockStore"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { ToolError } from "../../ToolError"
import { assembleWhenEnabled, describeCandidates, refusal } from "./blockingAccess"
import { BlockTargetResolver, foldName, mentionedUserId } from "./BlockTargetResolver"

export const UNBLOCK_USER = "unblock_user"

const Parameters = Schema.Struct({
  user: Schema.String.annotate({ description: "Who to unblock or unmute: their name, an @mention or their user id." })
})

/**
 * `unblock_user`: lifts this persona's mute or block of a member early. A member who left the
 * server is still found by the name the block was stored under.
 */
export const makeUnblockUserTool: Effect.Effect<Tool, never, PersonaBlockStore | GuildSettingsStore | BlockTargetResolver> =
  Effect.gen(function* () {
    const blocks = yield* PersonaBlockStore
    const settings = yield* GuildSettingsStore
    const resolver = yield* BlockTargetResolver
    const storageError = (error: { readonly message: string }) =>
      new ToolError({ tool: UNBLOCK_USER, error: "the block list could not be read or changed (a storage error)", detail: error.message, cause: error })

    const tool: Tool = makeTool({
      name: UNBLOCK_USER,
      description: "Lift your mute or block of a server member before it expires (for example after they apologized).",
      category: "discord",
      parameters: Parameters,
      requiresFollowUp: false,
      // Blocking and unblocking the same user in one pass must land in the order the model gave.
      sequential: true,
      isAvailableForContext: (context) => context.guildId !== undefined,
      assembleForContext: (context) => assembleWhenEnabled(settings)(tool)(context),
      triggerPatterns: [/\b(?:unblock|unmute|un-block|un-mute)\b/i],
      execute: ({ user }) =>
        Effect.gen(function* () {
          const context = yield* ToolContext
          const refused = yield* refusal(settings, UNBLOCK_USER, context)
          if (refused !== undefined || context.guildId === undefined) return refused ?? toolFailure("Not in a server.")
          const guildId = context.guildId
          const lookup = yield* resolver.resolve(guildId, user)
          if (lookup._tag === "Ambiguous") {
            return toolFailure(`Several members match "${user.trim()}": ${describeCandidates(lookup.candidates)}. Use their mention or id.`)
          }
          const active = yield* blocks.activeBlocks(guildId, context.persona.id).pipe(Effect.mapError(storageError))
          const target =
            lookup._tag === "Found"
              ? active.find((block) => block.userId === lookup.member.userId)
              : active.find((block) => block.userId === mentionedUserId(user) || foldName(block.userName) === foldName(user))
          const name = lookup._tag === "Found" ? lookup.member.displayName : user.trim()
          if (target === undefined) return toolFailure(`${name} is not muted or blocked by you.`)
          const removed = yield* blocks.unblock(guildId, context.persona.id, target.userId).pipe(Effect.mapError(storageError))
          if (Option.isNone(removed)) return toolFailure(`${name} is not muted or blocked by you.`)
          yield* Effect.logInfo(`Persona lifted the ${removed.value.mode} of user ${target.userId} in guild ${guildId}`)
          return toolSuccess(
            { status: "user_unblocked", user: removed.value.userName, previous_block_type: removed.value.mode },
            { message: `${removed.value.userName} is no longer ${removed.value.mode === "mute" ? "muted" : "blocked"}.` }
          )
        })
    })
    return tool
  })
