import { Effect, Schema } from "effect"
import { toolFailure, toolSuccess } from "../../../domain/ToolResult"
import type { GuildSettingsStore } from "../../../store/GuildSettingsStore"
import { type ShortTermMemory, ShortTermMemoryStore } from "../../../store/ShortTermMemoryStore"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"
import { ToolError } from "../../ToolError"
import { makeMemoryScopeResolver } from "./memoryScope"

export const UPDATE_SHORT_TERM_MEMORY = "update_short_term_memory"

/** One slot of the short-term memory: a parameter of the tool and a line of the rendered memory. */
export interface ShortTermMemoryCategory {
  /** Parameter name: lowercase letters, digits and `_`, starting with a letter. */
  readonly name: string
  /** What belongs in it (shown to the model as the parameter description). */
  readonly description: string
}

export const defaultShortTermMemoryCategories: ReadonlyArray<ShortTermMemoryCategory> = [
  {
    name: "summary",
    description:
      "The key points of the ongoing conversation or story so far: topics, decisions, what people asked for. " +
      "Enough detail to continue naturally later."
  },
  {
    name: "scene_state",
    description: "Where things stand right now: place, who is present, moods, what is happening at this moment."
  }
]

/** Each category is cut to this many characters, so a memory never crowds out the conversation. */
export const MAX_CATEGORY_CHARS = 2000

const CATEGORY_NAME = /^[a-z][a-z0-9_]{0,63}$/

const DESCRIPTION =
  "Update your short-term working memory for this conversation: context you may need in the next messages " +
  "but that does not need to be stored permanently. The call replaces the whole memory: include every " +
  "category you want to keep, with its complete new text. It works silently (the user is not notified) and " +
  "only once per reply. The memory belongs to this channel (a thread shares its channel's; a server may share one " +
  "memory across its channels). Do not use it when the user asks you to remember something for future conversations."

/**
 * `update_short_term_memory`: replaces the category map of the turn's memory: its channel's (a
 * thread's parent channel's), the server's with `server_wide_memory`, or the DM's.
 * Once per turn (`oncePerTurn`): after a success the loop hides it and refuses a later call.
 * Sequential: two writes in one pass would race for the same memory.
 */
export const makeUpdateShortTermMemoryTool = (
  categories: ReadonlyArray<ShortTermMemoryCategory> = defaultShortTermMemoryCategories
): Effect.Effect<Tool, never, ShortTermMemoryStore | GuildSettingsStore> =>
  Effect.gen(function* () {
    const invalid = categories.find((category) => !CATEGORY_NAME.test(category.name))
    if (categories.length === 0 || invalid !== undefined) {
      return yield* Effect.die(new Error(
        `update_short_term_memory needs at least one category named like "scene_state" (got ${JSON.stringify(invalid?.name ?? "none")})`
      ))
    }
    const store = yield* ShortTermMemoryStore
    const scopeOf = yield* makeMemoryScopeResolver
    const parameters = Schema.Struct(
      Object.fromEntries(
        categories.map((category) => [category.name, Schema.optional(Schema.String.annotate({ description: category.description }))])
      )
    )

    return makeTool({
      name: UPDATE_SHORT_TERM_MEMORY,
      description: DESCRIPTION,
      category: "memory",
      parameters,
      // A memory write needs no follow-up: the loop ends the turn after pre-tool text.
      requiresFollowUp: false,
      oncePerTurn: true,
      sequential: true,
      endsTurnAfterText: true,
      // NovelAI's small token budget is better spent on the conversation (TomoriBot does the same).
      isAvailableFor: (provider) => provider !== "novelai",
      execute: (args) =>
        Effect.gen(function* () {
          const context = yield* ToolContext
          const memory: Record<string, string> = {}
          const truncated: Array<string> = []
          for (const category of categories) {
            const text = args[category.name]?.trim()
            if (text === undefined || text.length === 0) continue
            if (text.length > MAX_CATEGORY_CHARS) truncated.push(category.name)
            memory[category.name] = text.slice(0, MAX_CATEGORY_CHARS)
          }
          const written = Object.keys(memory)
          if (written.length === 0) {
            return toolFailure(
              `Provide the new text of at least one category (${categories.map((category) => category.name).join(", ")}).`
            )
          }
          const place = {
            guildId: context.guildId,
            channelId: context.channelId,
            parentChannelId: context.parentChannelId,
            userId: context.userId
          }
          yield* scopeOf(place).pipe(
            Effect.flatMap((scope) => store.replace(scope, context.persona.id, memory satisfies ShortTermMemory)),
            Effect.mapError(
              (error) =>
                new ToolError({
                  tool: UPDATE_SHORT_TERM_MEMORY,
                  error: "a storage error",
                  userMessage: "Short-term memory could not be saved right now; continue without it.",
                  detail: error.message,
                  cause: error
                })
            )
          )
          yield* Effect.logInfo(`Short-term memory replaced: ${written.join(", ")}`)
          return toolSuccess(
            {
              status: "short_term_memory_updated",
              categories: written,
              ...(truncated.length === 0 ? {} : { truncated_to_chars: MAX_CATEGORY_CHARS, truncated })
            },
            { message: "Short-term memory updated (the user is not notified)." }
          )
        })
    })
  })
