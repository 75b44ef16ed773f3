import { Data } from "effect"
import type { Sticker } from "./Sticker"

/**
 * What a tool's result changes about the reply itself, beyond the conversation: the loop applies
 * it to the turn without knowing which tool produced it. A tool declares the kind it may carry
 * (`Tool.turnEffect`), so that a call whose result carries none (a miss, a failure, a timeout)
 * clears an earlier one.
 */
export type TurnEffect = Data.TaggedEnum<{
  /** The sticker sent with the reply (the latest one chosen wins). */
  StickerSelected: { readonly sticker: Sticker }
}>

export const TurnEffect = Data.taggedEnum<TurnEffect>()

/** The kinds of turn effect a tool may declare. */
export type TurnEffectKind = TurnEffect["_tag"]
