import { Effect, Schema } from "effect"
import type { Sticker } from "../../../domain/Sticker"
import { toolFailure, toolSuccess } from "../../../domain/ToolResult"
import { TurnEffect } from "../../../domain/TurnEffect"
import { StickerCatalog } from "../../StickerCatalog"
import { makeTool, type Tool } from "../../Tool"
import { ToolContext } from "../../ToolContext"

export const SELECT_STICKER = "select_sticker_for_response"

/** How many stickers the assembled description and enum list (a boosted guild has at most 60). */
const MAX_LISTED_STICKERS = 60

const BASE_DESCRIPTION =
  "Select one of this server's stickers to send with your reply, when one fits the emotion or reaction of " +
  "your message. Call it before writing the reply; the sticker is sent alongside your text. Calling it again " +
  "replaces the earlier choice."

const Parameters = Schema.Struct({
  sticker_name: Schema.String.annotate({ description: "The exact name of the sticker, from the list." })
})

/** Case, surrounding `:colons:` and repeated spaces do not matter when matching a name. */
const normalizeStickerName = (name: string): string =>
  name.normalize("NFKC").trim().replace(/^:(.*):$/u, "$1").trim().replace(/\s+/gu, " ").toLowerCase()

/** The sticker a name (or, as a fallback, an id) designates; the first one when names repeat. */
export const findSticker = (stickers: ReadonlyArray<Sticker>, requested: string): Sticker | undefined => {
  const wanted = normalizeStickerName(requested)
  return (
    stickers.find((sticker) => normalizeStickerName(sticker.name) === wanted) ??
    stickers.find((sticker) => sticker.id === requested.trim())
  )
}

const distinctNames = (stickers: ReadonlyArray<Sticker>): ReadonlyArray<string> => [
  ...new Set(stickers.map((sticker) => sticker.name).filter((name) => name.trim().length > 0))
].slice(0, MAX_LISTED_STICKERS)

const quotedList = (names: ReadonlyArray<string>): string => names.map((name) => JSON.stringify(name)).join(", ")

/**
 * `select_sticker_for_response`: a success carries the chosen sticker as its turn effect, which
 * the loop sends with the reply (the latest call wins; a miss or a failure clears it).
 * Assembly lists the guild's stickers in the description and as an enum, and hides the tool in
 * DMs and in guilds without stickers. Execution reads the catalog again (stickers change).
 */
export const makeSelectStickerTool: Effect.Effect<Tool, never, StickerCatalog> = Effect.gen(function* () {
  const catalog = yield* StickerCatalog
  const listStickers = (guildId: string | undefined): Effect.Effect<ReadonlyArray<Sticker>> =>
    guildId === undefined || catalog.list === undefined ? Effect.succeed([]) : catalog.list(guildId)

  const tool: Tool = makeTool({
    name: SELECT_STICKER,
    description: BASE_DESCRIPTION,
    category: "discord",
    parameters: Parameters,
    requiresFollowUp: false,
    turnEffect: "StickerSelected",
    sequential: true,
    // TomoriBot: NovelAI's model cannot reliably spell CJK sticker names as arguments.
    isAvailableFor: (provider) => provider !== "novelai",
    isAvailableForContext: (context) => context.guildId !== undefined,
    triggerPatterns: [/\bstickers?\b/i],
    assembleForContext: (context) =>
      Effect.map(listStickers(context.guildId), (stickers): Tool | null => {
        const names = distinctNames(stickers)
        if (names.length === 0) return null
        return {
          ...tool,
          description: `${BASE_DESCRIPTION} Available stickers: ${quotedList(names)}.`,
          parameters: {
            ...tool.parameters,
            properties: {
              sticker_name: { type: "string", description: "The exact name of the sticker.", enum: names }
            }
          }
        }
      }),
    execute: ({ sticker_name }) =>
      Effect.gen(function* () {
        const context = yield* ToolContext
        if (context.guildId === undefined) return toolFailure("Stickers are not available in direct messages.")
        const stickers = yield* listStickers(context.guildId)
        const chosen = findSticker(stickers, sticker_name)
        if (chosen === undefined) {
          const names = distinctNames(stickers)
          return toolFailure(`Sticker "${sticker_name.trim()}" was not found.`, {
            message:
              names.length === 0
                ? "This server has no stickers; reply without one."
                : `Sticker "${sticker_name.trim()}" was not found. Available stickers: ${quotedList(names)}. ` +
                  "Call the tool again with one of these exact names, or reply without a sticker."
          })
        }
        return toolSuccess(
          { status: "sticker_selected", sticker_id: chosen.id, sticker_name: chosen.name },
          { turnEffect: TurnEffect.StickerSelected({ sticker: chosen }) }
        )
      })
  })
  return tool
})
